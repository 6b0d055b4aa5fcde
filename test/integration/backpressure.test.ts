import { errorEvent, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { tempSqlitePath } from '../support/postgres';

/**
 * Lanes are bounded and answer at once. The writer is held back with a long
 * flush interval and a batch size equal to the capacity, so the standard lane
 * fills deterministically.
 */
describe('bounded lanes', () => {
  let c: InProcessCollector;
  const app = 'lanes';

  beforeAll(async () => {
    c = await startInProcess({
      SLUICE_SQLITE_PATH: tempSqlitePath('lanes'),
      SLUICE_QUEUE_CAPACITY: '10',
      SLUICE_BATCH_SIZE: '10',
      SLUICE_ERROR_QUEUE_CAPACITY: '2',
      SLUICE_FLUSH_INTERVAL_MS: '60000',
    });
  });

  afterAll(async () => {
    await c?.stop();
  });

  it('a full standard lane answers 429 with Retry-After while the error lane still takes errors', async () => {
    const first = await postEvents(
      c.url,
      Array.from({ length: 6 }, () => metric(app)),
    );
    expect(first).toMatchObject({ status: 202, body: { accepted: 6 } });

    const started = Date.now();
    const mixed = [
      metric(app),
      errorEvent(app),
      metric(app),
      metric(app),
      metric(app),
      metric(app),
      errorEvent(app),
    ];
    const res = await postEvents(c.url, mixed);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ accepted: 2, rejected: [], throttled: [0, 2, 3, 4, 5], error: 'queue_full' });
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);

    // The error lane has its own room (2, now held): one more error is throttled too.
    const full = await postEvents(c.url, [errorEvent(app)]);
    expect(full).toMatchObject({ status: 429, body: { error: 'queue_full', throttled: [0] } });

    // Admission is all-or-nothing per lane: 5 more metrics do not fit, 4 do.
    expect(
      (
        await postEvents(
          c.url,
          Array.from({ length: 5 }, () => metric(app)),
        )
      ).status,
    ).toBe(429);
    expect(
      (
        await postEvents(
          c.url,
          Array.from({ length: 4 }, () => metric(app)),
        )
      ).status,
    ).toBe(202);

    const text = await (await fetch(`${c.url}/metrics`)).text();
    // Events that could not all fit are throttled before validation: counted as unvalidated.
    expect(text).toMatch(/sluice_events_throttled_total\{reason="queue_full",type="unvalidated"\} 10/);
    expect(text).toMatch(/sluice_events_throttled_total\{reason="queue_full",type="error"\} 1/);
  });
});

describe('lanes drain and recover', () => {
  it('after a full lane drains, the same events are taken', async () => {
    const c = await startInProcess({
      SLUICE_SQLITE_PATH: tempSqlitePath('lanes2'),
      SLUICE_QUEUE_CAPACITY: '20',
      SLUICE_BATCH_SIZE: '20',
      SLUICE_FLUSH_INTERVAL_MS: '200',
    });
    try {
      const batch = Array.from({ length: 20 }, () => metric('drain'));
      expect((await postEvents(c.url, batch)).status).toBe(202);
      const retry = Array.from({ length: 5 }, () => metric('drain'));
      await waitFor('lane drained', async () => (await postEvents(c.url, retry)).status === 202);
      const page = await c.collector.storage.queryEvents({ app: 'drain', limit: 100 });
      expect(page.events.length).toBeGreaterThanOrEqual(20);
    } finally {
      await c.stop();
    }
  });
});
