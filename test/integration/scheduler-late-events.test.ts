import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { getJson, postEvents, waitFor } from '../support/http';
import { metric } from '../support/events';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

/**
 * Reproduction of "rollups never see late events", black-box with the defaults a user gets
 * (lateness, retentions, batch sizes), only the downsample interval shortened: samples stored
 * 30 minutes and 6 hours after their ts reach the 1m and 1h rollups at the next run.
 */

const MIN = 60_000;
const HOUR = 3_600_000;

interface Point {
  readonly ts: number;
  readonly app: string;
  readonly count: number;
  readonly min: number;
  readonly max: number;
  readonly sum: number;
}

/** The rollup points a brute-force fold of `samples` gives, oldest first (as the API orders them). */
function expectedPoints(samples: ReadonlyArray<{ ts: number; value: number }>, app: string, width: number) {
  const buckets = new Map<number, Point>();
  for (const s of samples) {
    const ts = Math.floor(s.ts / width) * width;
    const b = buckets.get(ts);
    buckets.set(
      ts,
      b === undefined
        ? { ts, app, count: 1, min: s.value, max: s.value, sum: s.value }
        : {
            ...b,
            count: b.count + 1,
            min: Math.min(b.min, s.value),
            max: Math.max(b.max, s.value),
            sum: b.sum + s.value,
          },
    );
  }
  return [...buckets.values()].sort((a, b) => a.ts - b.ts).map((p) => ({ ...p, avg: p.sum / p.count }));
}

async function downsampleRuns(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('sluice_scheduler_runs_total{job_name="downsample",result="success"}'));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe.each(['postgres', 'sqlite'] as const)('late samples reach the rollups (%s)', (kind) => {
  let db: TestDatabase | null = null;
  let sqliteFile: string | null = null;
  let c: InProcessCollector;

  beforeAll(async () => {
    const env: Record<string, string> = { SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: '1000', SLUICE_ACK: 'stored' };
    if (kind === 'postgres') {
      db = await createTestDatabase('late_events');
      env.SLUICE_DATABASE_URL = db.url;
    } else {
      sqliteFile = tempSqlitePath('late_events');
      env.SLUICE_SQLITE_PATH = sqliteFile;
    }
    c = await startInProcess(env);
  });

  afterAll(async () => {
    await c?.stop();
    await db?.drop();
    if (sqliteFile !== null) fs.rmSync(path.dirname(sqliteFile), { recursive: true, force: true });
  });

  it('samples stamped 30 minutes and 6 hours ago, posted after a run, are in the 1m and 1h rollups after the next', async () => {
    await waitFor('a first downsample run', async () => (await downsampleRuns(c.url)) >= 1, 20_000);
    const name = `late.${crypto.randomBytes(4).toString('hex')}`;
    const now = Date.now();
    const samples = [30 * MIN, 6 * HOUR].flatMap((age) =>
      Array.from({ length: 100 }, (_, i) => ({ ts: now - age + i * 250, value: crypto.randomInt(1000) / 8 })),
    );
    const events = samples.map((s) => metric('web-shop', { name, ts: s.ts, value: s.value }));
    for (let i = 0; i < events.length; i += 50) {
      const answer = await postEvents(c.url, events.slice(i, i + 50));
      expect(answer.status).toBe(202);
      expect(answer.body.accepted).toBe(50);
    }

    const raw = await getJson(`${c.url}/v1/metrics?name=${name}&resolution=raw&limit=1000`);
    expect(raw.body.points).toHaveLength(200);
    for (const [resolution, width] of [
      ['1m', MIN],
      ['1h', HOUR],
    ] as const) {
      const expected = expectedPoints(samples, 'web-shop', width);
      let last: unknown = null;
      await waitFor(
        `${resolution} rollups equal to a brute-force fold (last answer ${JSON.stringify(last)})`,
        async () => {
          const { body } = await getJson(
            `${c.url}/v1/metrics?name=${name}&resolution=${resolution}&limit=1000`,
          );
          last = body.points;
          return JSON.stringify(body.points) === JSON.stringify(expected);
        },
        10_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}; expected ${JSON.stringify(expected)}, got ${JSON.stringify(last)}`);
      });
    }
  });
});
