import { connect, type Socket } from 'node:net';
import { startCollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { postEvents } from '../support/http';
import { idsNotStoredOnce } from '../support/pg-client';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/** A client that sends headers promising a large body, a few bytes of it, then nothing. */
function stalledClient(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        'POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"events":[',
        () => resolve(socket),
      );
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}

/** SIGTERM while a client stalls mid-body: shutdown is not held, and nothing acknowledged is lost. */
describe('shutdown with a stalled client (postgres, default drain and grace)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('shutdown_stalled');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('exits 0 within drain + grace and stores every acknowledged event', async () => {
    const c = await startCollectorProcess(
      {
        SLUICE_DATABASE_URL: db.url,
        // Nothing is flushed before the shutdown: the events are in the lanes at SIGTERM.
        SLUICE_FLUSH_INTERVAL_MS: '60000',
        SLUICE_BATCH_SIZE: '5000',
      },
      { defaults: 'user' },
    );
    const events = Array.from({ length: 500 }, () => metric('stalled'));
    const ids = events.map((e) => e.id as string);
    // The default rate limit (100/s) takes these in part: resend what is throttled, as the SDK does.
    let pending = events;
    for (let round = 0; pending.length > 0 && round < 20; round++) {
      const res = await postEvents(c.url, pending);
      expect([202, 429]).toContain(res.status);
      // A 429 without `throttled` refused the whole request (e.g. `overloaded`): resend all of it.
      const throttled = res.body.throttled;
      if (res.status === 202 || throttled)
        pending = (throttled ?? []).map((i) => pending[i] as (typeof events)[number]);
      if (pending.length > 0)
        await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after')) * 1000));
    }
    expect(pending).toHaveLength(0);
    const socket = await stalledClient(c.port);
    let socketClosed = false;
    socket.on('close', () => (socketClosed = true));
    const sigtermAt = Date.now();
    c.child.kill('SIGTERM');
    const code = await c.exited;
    const tookMs = Date.now() - sigtermAt;
    expect(code).toBe(0);
    // Default drain delay 3 s + default grace 5 s, plus the flush.
    expect(tookMs).toBeLessThan(3000 + 5000 + 5000);
    expect(socketClosed).toBe(true);
    expect(await idsNotStoredOnce(db.url, ids)).toEqual([]);
    expect(c.output.join('\n')).not.toMatch(/forced exit/);
  }, 60_000);
});
