import { randomUUID } from 'node:crypto';
import { headers } from '@nats-io/nats-core';
import { jetstream } from '@nats-io/jetstream';
import type { TelemetryEvent } from '../../src/events/types';
import { startCollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { exactlyOnce, startWorkerProcess, useQueueFixture } from './queue-support';

/** A normalised event, as a collector before payload format 2 published it (format 1: an object). */
function formatOneEvent(i: number): TelemetryEvent {
  return {
    id: randomUUID(),
    type: i % 2 === 0 ? 'metric' : 'log',
    name: 'upgrade.sample',
    ts: Date.now() - i,
    app: 'formats',
    version: '1.0.0',
    env: 'prod',
    value: i % 2 === 0 ? i : null,
    summary: null,
    error: null,
    message: i % 2 === 0 ? null : `line ${i}`,
    attributes: { route: '/old', n: i },
  };
}

/** Rolling upgrade: messages already in the stream in the previous payload format are still stored. */
describe('queue mode: payload formats', () => {
  const fx = useQueueFixture('formats');

  it('a worker stores both a format-1 message left in the stream and the format-2 messages collectors publish now', async () => {
    const c = await startCollectorProcess({
      ...fx.q.env,
      SLUICE_MODE: 'ingest',
      SLUICE_DATABASE_URL: fx.db.url,
    });
    fx.processes.push(c);
    // What a collector of the previous release left behind: an array of event objects.
    const old = Array.from({ length: 20 }, (_, i) => formatOneEvent(i));
    const h = headers();
    h.set('Sluice-Events', String(old.length));
    await jetstream(fx.q.nc).publish(
      `${fx.q.prefix}.standard`,
      new TextEncoder().encode(JSON.stringify(old)),
      {
        msgID: `standard-format-one-${randomUUID()}`,
        headers: h,
      },
    );
    const now = Array.from({ length: 30 }, () => metric('formats'));
    const res = await postEvents(c.url, now);
    expect(res.status).toBe(202);
    expect(await fx.q.streamMessages()).toBe(2);

    const w = await startWorkerProcess({ ...fx.q.env, SLUICE_DATABASE_URL: fx.db.url });
    fx.processes.push(w);
    await waitFor('the work queue empty', async () => (await fx.q.streamMessages()) === 0, 20_000);
    expect(
      await exactlyOnce(fx.db.url, [...old.map((e) => e.id), ...now.map((e) => e.id as string)]),
    ).toBeNull();
    expect((await fx.q.jsm.streams.info(`${fx.q.stream}_DEAD`)).state.messages).toBe(0);
  });
});
