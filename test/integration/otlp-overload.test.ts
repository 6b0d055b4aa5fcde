import { freePort, startCollectorProcess } from '../support/collector-process';
import { waitFor } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { logRecord, logsRequest, postOtlp } from './otlp-requests';
import { bySeq, storedEvents, uniqueApp } from './otlp-support';

/** Most exports the flood sends, and longest it runs: the bounds of this load loop. */
const MAX_REQUESTS = 3000;
const MAX_MS = 15_000;
const RECORDS = 20;
const RESOURCE_EXHAUSTED = 8;

/**
 * A collector process flooded with OTLP exports by more concurrent exporters than it can serve:
 * the receiver sheds like `POST /v1/events` (refused unread with 429 once requests wait past
 * SLUICE_SHED_LAG_MS), never fails a request, and stores every record of every export it took,
 * once.
 */
describe('OTLP overload (postgres)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('otlp-overload');
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('refuses exports unread while saturated, answers every one, and stores every taken record once', async () => {
    const otlpPort = await freePort();
    const c = await startCollectorProcess({
      SLUICE_DATABASE_URL: db.url,
      SLUICE_SHED_LAG_MS: '2',
      SLUICE_OTLP_PORT: String(otlpPort),
    });
    const otlpUrl = `http://127.0.0.1:${otlpPort}`;
    const app = uniqueApp('flood');
    const taken: number[] = [];
    const answers: Record<string, number> = {};
    let overloaded = 0;
    let sent = 0;
    let stop = false;
    const deadline = Date.now() + MAX_MS;
    const worker = async (): Promise<void> => {
      while (!stop && sent < MAX_REQUESTS && Date.now() < deadline) {
        const base = sent++ * RECORDS;
        const records = Array.from({ length: RECORDS }, (_, i) => logRecord(base + i));
        const res = await postOtlp(otlpUrl, 'logs', logsRequest(app, records), {
          encoding: sent % 2 === 0 ? 'json' : 'protobuf',
        });
        answers[res.status] = (answers[res.status] ?? 0) + 1;
        if (res.status === 200) {
          expect(res.body).toEqual({});
          for (let i = 0; i < RECORDS; i++) taken.push(base + i);
          continue;
        }
        expect(res.status).toBe(429);
        expect(res.body.code).toBe(RESOURCE_EXHAUSTED);
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        if (/saturated/.test(res.body.message)) overloaded++;
      }
    };
    const workers = Array.from({ length: 48 }, worker);
    try {
      await waitFor('exports refused unread', () => overloaded >= 20 && taken.length > 0, MAX_MS);
    } finally {
      stop = true;
      await Promise.all(workers);
    }
    const metrics = await (await fetch(`${c.url}/metrics`)).text();
    expect(metrics).toMatch(/sluice_otlp_requests_total\{signal="unread",encoding="\w+",status="429"\} \d+/);

    expect(await c.stop()).toBe(0);
    // Read back through a collector on the same database (the flooded one has exited).
    const reader = await startCollectorProcess({ SLUICE_DATABASE_URL: db.url });
    try {
      const seqs = bySeq(await storedEvents(reader.url, app));
      const missing = taken.filter((seq) => seqs.get(seq)?.length !== 1);
      expect(missing).toEqual([]);
    } finally {
      await reader.stop();
    }
    process.stdout.write(
      `otlp overload: answers ${JSON.stringify(answers)}, records taken ${taken.length}\n`,
    );
  });
});
