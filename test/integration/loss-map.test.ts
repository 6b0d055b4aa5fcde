import { randomUUID } from 'node:crypto';
import { errorEvent, log, metric } from '../support/events';
import { postEvents } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { lossMap, rowsOfApp, settledLossMap, totalLosses, type StorageAt } from '../support/loss-map';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

const MINUTE = 60_000;

/**
 * The loss map at the collector, on each storage, with the defaults a user gets: what plain HTTP
 * senders (no client report) bring, and what a request's client report says, counted once however
 * often it is sent. After a drain nothing is pending, `stored` equals the rows in the database,
 * and generated = stored + Σ losses + pending exactly.
 */
describe.each(['sqlite', 'postgres'] as const)('loss map at the collector (%s)', (kind) => {
  let db: TestDatabase | null = null;
  let at: StorageAt;
  let c: InProcessCollector;

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase('loss_map') : null;
    at = db ? { kind: 'postgres', url: db.url } : { kind: 'sqlite', path: tempSqlitePath('loss_map') };
    c = await startInProcess(
      db ? { SLUICE_DATABASE_URL: db.url } : { SLUICE_SQLITE_PATH: (at as { path: string }).path },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
    await db?.drop();
  });

  it('accounts for every event a plain HTTP sender brought: stored or rejected by reason', async () => {
    const app = `direct-${kind}`;
    const ts = Date.now();
    const events = [
      ...Array.from({ length: 6 }, () => metric(app, { ts })),
      log(app, { ts }),
      errorEvent(app, { ts }),
      metric(app, { ts, value: 'NaN' }),
      log(app, { ts, name: '' }),
      log(app, { ts: 'yesterday' }),
    ];
    const answer = await postEvents(c.url, events);
    expect(answer.status).toBe(202);
    expect(answer.body.rejected).toHaveLength(3);

    const m = await settledLossMap(c.url, app, at);
    expect(m.generated).toBe(11);
    expect(m.stored).toBe(8);
    expect(m.losses.collector).toEqual({ value_invalid: 1, name_invalid: 1, ts_invalid: 1 });
    expect(m.generated).toBe(m.stored + totalLosses(m) + m.pending.sdk + m.pending.pipeline);
    expect(await rowsOfApp(at, app)).toBe(8);
  });

  it('counts a client report once however often it is sent, and its events from the SDK side', async () => {
    const app = `reported-${kind}`;
    const ts = Date.now();
    const minute = ts - (ts % MINUTE);
    const events = Array.from({ length: 5 }, () => metric(app, { ts }));
    // The report riding on the events: 7 captured, one sampled out, one invalid at capture.
    const first = {
      id: randomUUID(),
      rows: [{ app, minute, type: 'metric', captured: 7, dropped: { sampled: 1, invalid: 1 } }],
    };
    expect((await postEvents(c.url, null, { raw: JSON.stringify({ events, report: first }) })).status).toBe(
      202,
    );
    // The next report tells that the 5 were delivered; it is sent twice (its answer was lost).
    const second = { id: randomUUID(), rows: [{ app, minute, type: 'metric', delivered: 5 }] };
    for (let i = 0; i < 2; i++) {
      const r = await postEvents(c.url, null, { raw: JSON.stringify({ events: [], report: second }) });
      expect(r.status).toBe(202);
    }
    // And the events themselves resent (their 202 was lost): stored once, counted once.
    expect(
      (await postEvents(c.url, null, { raw: JSON.stringify({ events, report: { rows: [] } }) })).status,
    ).toBe(202);

    const m = await settledLossMap(c.url, app, at);
    expect(m).toMatchObject({ generated: 7, stored: 5, lost: 2, pending: { sdk: 0, pipeline: 0 } });
    expect(m.losses.sdk).toEqual({ sampled: 1, invalid: 1 });
    expect(m.generated).toBe(m.stored + totalLosses(m) + m.pending.sdk + m.pending.pipeline);

    const byMinute = await lossMap(c.url, app, '&by=minute');
    expect(byMinute.minutes).toEqual([expect.objectContaining({ minute, generated: 7, stored: 5 })]);
  });

  it('answers 400 naming the parameter for a missing app or a window the wrong way round', async () => {
    const missing = await fetch(`${c.url}/v1/outcomes`);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ message: expect.stringContaining('app') });
    const reversed = await fetch(`${c.url}/v1/outcomes?app=a&from=180000&to=60000`);
    expect(reversed.status).toBe(400);
  });
});
