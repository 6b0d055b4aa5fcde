import { startCollectorProcess } from '../support/collector-process';
import { log, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { settledLossMap, totalLosses } from '../support/loss-map';
import { metricValue, startWorkerProcess, useQueueFixture } from './queue-support';

/**
 * Tier 4: events that waited in the stream longer than `SLUICE_NATS_MAX_AGE` (no worker took them)
 * are lost, and counted: the worker that finally takes their message acks it unwritten and counts
 * its events as `losses.queue.max_age`, per app, minute and type. The stream itself keeps them
 * past the setting (its own max age is longer), so none is removed unread and uncounted.
 */
describe('loss map: events expired in the stream (tier 4)', () => {
  const fx = useQueueFixture('expired');

  it('counts the events of messages older than SLUICE_NATS_MAX_AGE as expired, and writes the younger ones', async () => {
    const app = 'expired-in-stream';
    const env = { ...fx.q.env, SLUICE_DATABASE_URL: fx.db.url, SLUICE_NATS_MAX_AGE: '2s' };
    const c = await startCollectorProcess({ ...env, SLUICE_MODE: 'ingest' });
    fx.processes.push(c);

    // No worker yet: these wait in the stream past the max age.
    const old = [
      ...Array.from({ length: 15 }, () => metric(app)),
      ...Array.from({ length: 5 }, () => log(app)),
    ];
    const first = await postEvents(c.url, old);
    expect(first.status).toBe(202);
    expect(first.body.accepted).toBe(20);
    const info = await fx.q.jsm.streams.info(fx.q.stream);
    // The stream keeps them longer than the setting: 2 s, plus an hour.
    expect(info.config.max_age).toBe((2_000 + 3_600_000) * 1e6);
    await waitFor(
      'the oldest message to pass SLUICE_NATS_MAX_AGE',
      async () => {
        const state = (await fx.q.jsm.streams.info(fx.q.stream)).state;
        return state.messages > 0 && Date.now() - Date.parse(state.first_ts) > 2_500;
      },
      10_000,
    );

    const w = await startWorkerProcess(env);
    fx.processes.push(w);
    await waitFor('the old messages taken', async () => (await fx.q.streamMessages()) === 0, 15_000);
    // Young ones, with a worker running, are written.
    const young = Array.from({ length: 10 }, () => metric(app));
    expect((await postEvents(c.url, young)).status).toBe(202);

    const m = await settledLossMap(c.url, app, { kind: 'postgres', url: fx.db.url }, 20_000);
    expect(m.losses.queue).toEqual({ max_age: 20 });
    expect(m).toMatchObject({ generated: 30, stored: 10, lost: 20, pending: { sdk: 0, pipeline: 0 } });
    expect(m.generated).toBe(m.stored + totalLosses(m) + m.pending.sdk + m.pending.pipeline);
    expect(await metricValue(w.url, 'sluice_queue_events_expired_total')).toBe(20);
  }, 60_000);
});
