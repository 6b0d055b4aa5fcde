import pg from 'pg';
import { createClient, fetchTransport, type Transport, type WireEvent } from '../../sdk/src/node';
import { waitFor } from '../support/http';
import { startInProcess } from '../support/in-process';
import { createTestDatabase } from '../support/postgres';

interface Exchange {
  readonly ids: readonly string[];
  readonly status: number | 'network error';
}

/** The real fetch transport, recording the ids each request carried and its answer. */
function recording(endpoint: string): { transport: Transport; log: Exchange[] } {
  const inner = fetchTransport(endpoint);
  const log: Exchange[] = [];
  const ids = (events: readonly WireEvent[]) => events.map((e) => e.id as string);
  return {
    log,
    transport: {
      async send(request) {
        try {
          const res = await inner.send(request);
          log.push({ ids: ids(request.events), status: res.status });
          return res;
        } catch (err) {
          log.push({ ids: ids(request.events), status: 'network error' });
          throw err;
        }
      },
    },
  };
}

/**
 * The resend the SDK really makes when a collector's answer says nothing was confirmed: with
 * `SLUICE_ACK=stored` and the write held up past `SLUICE_ACK_TIMEOUT_MS`, the collector answers
 * 503 while the events are still queued; the SDK keeps them and sends them again (with what was
 * captured since), so the same events are queued twice. Once the write goes through, each is
 * stored once: README "Guarantees", exactly once by `(id, ts)`.
 */
it('the SDK’s resend after 503 (ack timeout, events still queued) stores each event once', async () => {
  const db = await createTestDatabase('sdk_resend');
  const c = await startInProcess({
    SLUICE_DATABASE_URL: db.url,
    SLUICE_ACK: 'stored',
    SLUICE_ACK_TIMEOUT_MS: '1000',
  });
  const blocker = new pg.Client({ connectionString: db.url });
  await blocker.connect();
  const app = `sdk-resend-${process.pid}`;
  const { transport, log } = recording(`${c.url}/v1/events`);
  const client = createClient({
    endpoint: `${c.url}/v1/events`,
    app,
    aggregation: false,
    flushIntervalMs: 50,
    retry: { baseMs: 200, maxMs: 1000 },
    transport,
    onError: () => undefined, // the 503s are the point of the test
  });
  try {
    // Holding both tables' locks holds every write of events, not the health check.
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE events, metric_blocks IN ACCESS EXCLUSIVE MODE');
    for (let i = 0; i < 10; i++) {
      client.error(new Error(`checkout failed ${i}`), { seq: i });
      client.metric('render.frame_drop', i, { seq: i });
    }
    await waitFor(
      'a request answered 503 and its events sent again',
      () => {
        const refused = log.filter((x) => x.status === 503);
        return refused.length >= 2 && refused[1]!.ids.some((id) => refused[0]!.ids.includes(id));
      },
      20_000,
    );
    for (let i = 10; i < 15; i++) client.metric('render.frame_drop', i, { seq: i });
    await blocker.query('ROLLBACK');

    await client.flush({ timeoutMs: 20_000 });
    expect(client.stats()).toMatchObject({ buffered: { total: 0 }, inFlight: 0 });
    const captured = client.stats().captured;
    expect(captured).toBe(25);
    const { rows } = await blocker.query<{ n: string; ids: string }>(
      `SELECT count(*) AS n, count(DISTINCT id) AS ids
         FROM (SELECT id FROM events WHERE app = $1 UNION ALL SELECT id FROM metric_samples WHERE app = $1) s`,
      [app],
    );
    expect(rows[0]).toEqual({ n: String(captured), ids: String(captured) });
  } finally {
    await client.close();
    await blocker.end();
    await c.stop();
    await db.drop();
  }
});
