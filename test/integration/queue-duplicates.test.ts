import { startCollectorProcess } from '../support/collector-process';
import { log, metric, type WireEvent } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { settledLossMap, totalLosses } from '../support/loss-map';
import { exactlyOnce, metricValue, startWorkerProcess, useQueueFixture } from './queue-support';

/**
 * Reliability case 14: an event sent again after JetStream's duplicate window (so the stream
 * takes it as a new message) is still stored once: the database's `(id, ts)` dedupe holds where
 * the message id no longer can.
 */
describe('queue mode: an event resent after the duplicate window', () => {
  const fx = useQueueFixture('dupwindow');

  /** Stream sequence of the last message the stream stored. */
  const lastSeq = async (): Promise<number> => (await fx.q.jsm.streams.info(fx.q.stream)).state.last_seq;

  /** Every message up to `seq` acked by the workers (the consumers' ack floors reached it). */
  const consumed = async (seq: number): Promise<boolean> => {
    const floors = await Promise.all(
      ['error', 'standard'].map(async (lane) => {
        const c = await fx.q.jsm.consumers.info(fx.q.stream, `${fx.q.stream}_${lane}`);
        return { floor: c.ack_floor.stream_seq, pending: c.num_pending + c.num_ack_pending };
      }),
    );
    return floors.every((f) => f.pending === 0) && Math.max(...floors.map((f) => f.floor)) >= seq;
  };

  it('is stored once, though the stream took the resent request as a new message', async () => {
    // The shortest window the setting allows: the resend below lands after it. Collectors and
    // workers both create the stream from their settings, so both get it.
    const env = { ...fx.q.env, SLUICE_DATABASE_URL: fx.db.url, SLUICE_NATS_DUPLICATE_WINDOW: '100ms' };
    const c = await startCollectorProcess({ ...env, SLUICE_MODE: 'ingest' });
    fx.processes.push(c);
    const w = await startWorkerProcess(env);
    fx.processes.push(w);

    // One lane: the request is one message, so the resend taken as new holds every event.
    // Metric samples (removed by the merge job) and logs (skipped by the write's dedupe).
    const batch: WireEvent[] = Array.from({ length: 20 }, (_, i) => (i % 2 ? metric('dup') : log('dup')));
    const ids = batch.map((e) => e.id as string);
    expect((await postEvents(c.url, batch)).status).toBe(202);
    await waitFor(
      'the first sending stored',
      async () => (await exactlyOnce(fx.db.url, ids)) === null,
      15_000,
    );
    const firstLast = await lastSeq();

    // The same request again (same ids and ts), until JetStream no longer drops it as a
    // duplicate: its sequence advancing shows the resend was stored as new messages.
    await waitFor(
      'a resend past the duplicate window',
      async () => {
        expect((await postEvents(c.url, batch)).status).toBe(202);
        return (await lastSeq()) > firstLast;
      },
      10_000,
    );
    const resentLast = await lastSeq();
    await waitFor('the workers consumed the resend', () => consumed(resentLast), 15_000);

    expect(await exactlyOnce(fx.db.url, ids)).toBeNull();
    // The database's dedupe is what kept it once (for metric samples, the merge job's, which
    // removes the copies a moment after they were written).
    await waitFor(
      'the resent copies counted as deduplicated',
      async () => (await metricValue(w.url, 'sluice_events_deduplicated_total')) >= ids.length,
      15_000,
    );
    expect(await metricValue(w.url, 'sluice_events_deduplicated_total')).toBeGreaterThanOrEqual(ids.length);

    // A direct sender's every acceptance is counted, and every copy past the first is a duplicate:
    // nothing stays pending once the workers consumed the stream.
    const m = await settledLossMap(c.url, 'dup', { kind: 'postgres', url: fx.db.url });
    expect(m.stored).toBe(ids.length);
    expect(m.losses.storage).toEqual({ duplicate: m.generated - ids.length });
    expect(m.generated).toBe(m.stored + totalLosses(m));
  });
});
