import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { TelemetryEvent } from '../../src/events/types';
import { JOB_LOCK_KEYS, JOB_NAMES } from '../../src/scheduler/lock-keys';
import type { PostgresStorage } from '../../src/storage/postgres';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { runAlone } from '../support/run-alone';
import { openPostgresStorage, writeEvents } from '../support/storage';
import { telemetryEvent } from '../support/telemetry-events';

/**
 * Several scheduler instances as separate processes (test/support/processes/scheduler-instance.ts,
 * built by `npm run build`) on one real PostgreSQL database. Everything is asserted from the
 * database: the runs table, pg_locks, pg_stat_activity, the rollups.
 */
const INSTANCE = path.resolve(__dirname, '../../dist/test/support/processes/scheduler-instance.js');
const MIN = 60_000;

interface Line {
  event?: string;
  level?: string;
  msg?: string;
  [key: string]: unknown;
}

interface Instance {
  readonly id: string;
  readonly child: ChildProcess;
  readonly lines: Line[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first stdout line matching `test`. */
  line(test: (l: Line) => boolean, what: string, timeoutMs?: number): Promise<Line>;
  /** SIGTERM, then the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

// Three processes each run five jobs on 300 ms windows and no window may be missed: a file beside it
// on the two cores made the merge job's fifth timer miss windows (seen twice at load 6–14).
runAlone();

let db: TestDatabase;
let storage: PostgresStorage;
let admin: pg.Client;
const running: Instance[] = [];

function start(id: string, env: Record<string, string>): Instance {
  const child = spawn(process.execPath, [INSTANCE], {
    env: {
      PATH: process.env.PATH ?? '',
      SLUICE_DATABASE_URL: db.url,
      SLUICE_LOG_LEVEL: 'warn',
      TEST_INSTANCE: id,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Line[] = [];
  let partial = '';
  const take = (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const p of parts.filter(Boolean)) {
      try {
        lines.push(JSON.parse(p) as Line);
      } catch {
        lines.push({ msg: p, level: 'raw' });
      }
    }
  };
  child.stdout?.setEncoding('utf8').on('data', take);
  child.stderr?.setEncoding('utf8').on('data', take);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const instance: Instance = {
    id,
    child,
    lines,
    exited,
    line: (test, what, timeoutMs = 15_000) =>
      waitUntil(
        `${id}: ${what}`,
        () => lines.find(test),
        timeoutMs,
        () => lines,
      ),
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
  running.push(instance);
  return instance;
}

/** Polls `check` (every 50 ms) until it returns something truthy. */
async function waitUntil<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs: number,
  context: () => unknown = () => '',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${JSON.stringify(context())}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

const nonEmpty = <T>(xs: T[]): T[] | null => (xs.length > 0 ? xs : null);

/** Backends holding a job's advisory lock: the bigint key is (classid << 32) | objid, objsubid 1. */
async function lockHolders(job: keyof typeof JOB_LOCK_KEYS): Promise<Array<{ pid: number; app: string }>> {
  const { rows } = await admin.query(
    `SELECT l.pid, a.application_name AS app FROM pg_locks l LEFT JOIN pg_stat_activity a USING (pid)
      WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
        AND ((l.classid::bigint << 32) | l.objid::bigint) = $1::bigint`,
    [JOB_LOCK_KEYS[job].toString()],
  );
  return rows;
}

interface RunRow {
  job: string;
  slot: number;
  instance: string;
  rows: number | null;
  error: string | null;
  finished: boolean;
  /** The server's clock at the claim (claimed_at), whatever the instance's clock said. */
  claimedAt: number;
  durationMs: number | null;
}

async function runs(job?: string): Promise<RunRow[]> {
  const { rows } = await admin.query(
    `SELECT job, slot_ms, instance, rows, error, finished_ms IS NOT NULL AS finished, duration_ms,
            floor(extract(epoch FROM claimed_at) * 1000)::bigint AS claimed_at
       FROM scheduler_runs WHERE $1::text IS NULL OR job = $1 ORDER BY job, slot_ms`,
    [job ?? null],
  );
  return rows.map((r) => ({
    job: r.job,
    slot: Number(r.slot_ms),
    instance: r.instance,
    rows: r.rows === null ? null : Number(r.rows),
    error: r.error,
    finished: r.finished,
    claimedAt: Number(r.claimed_at),
    durationMs: r.duration_ms === null ? null : Math.round(Number(r.duration_ms)),
  }));
}

/** Raw samples over ten minutes, and how many rollup rows folding them writes. */
function sampleData(now: number): { events: TelemetryEvent[]; foldRows: number } {
  const events: TelemetryEvent[] = [];
  for (let i = 0; i < 60; i++) {
    const name = i % 2 === 0 ? 'm.a' : 'm.b';
    events.push(telemetryEvent('metric', { name, ts: now - 30 * MIN + i * 10_000, app: 'app', value: i }));
  }
  const buckets = (width: number) => new Set(events.map((e) => `${e.name}/${Math.floor(e.ts / width)}`)).size;
  return { events, foldRows: buckets(MIN) + buckets(60 * MIN) };
}

const quiet = (i: Instance) =>
  i.lines.filter(
    (l) => l.level === 'error' || l.level === 'fatal' || l.level === 'raw' || /failed/.test(String(l.msg)),
  );

beforeAll(async () => {
  if (!fs.existsSync(INSTANCE)) {
    throw new Error(`${INSTANCE} is missing: run \`npm run build\` first (npm test does).`);
  }
  db = await createTestDatabase('sched_processes');
  storage = openPostgresStorage(db.url, { partitionsAheadDays: 3 });
  await storage.migrate();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
});

afterEach(async () => {
  for (const i of running.splice(0)) {
    if (i.child.exitCode === null && i.child.signalCode === null) i.child.kill('SIGKILL');
    await i.exited;
  }
  await admin.query(
    'TRUNCATE scheduler_runs, metric_rollups_1m, metric_rollups_1h, metric_rollup_invalidations',
  );
});

afterAll(async () => {
  await storage?.close();
  await admin?.end();
  await db?.drop();
});

describe('three scheduler processes', () => {
  const INTERVAL = 300;
  const WINDOWS = 100;

  it('run each job exactly once per interval, none missed, one of them with a skewed clock', async () => {
    const every = {
      SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: String(INTERVAL),
      SLUICE_JOB_PURGE_INTERVAL_MS: String(INTERVAL),
      SLUICE_JOB_PARTITIONS_INTERVAL_MS: String(INTERVAL),
      SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS: String(INTERVAL),
      SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS: String(INTERVAL),
    };
    const instances = [
      start('a', every),
      // 100 ms behind: always knocks late in the window.
      start('b', { ...every, TEST_CLOCK_SKEW_MS: '-100' }),
      // 72 s ahead, and 5 ms short of a whole number of windows: knocks in the same part of
      // the window as `a`, so it wins some and loses some.
      start('c', { ...every, TEST_CLOCK_SKEW_MS: String(240 * INTERVAL + INTERVAL - 5) }),
    ];
    for (const i of instances) await i.line((l) => l.event === 'started', 'start');

    await waitUntil(
      `${WINDOWS + 2} runs of every job`,
      async () => {
        const { rows } = await admin.query('SELECT job, count(*) AS n FROM scheduler_runs GROUP BY job');
        return rows.length === JOB_NAMES.length && rows.every((r) => Number(r.n) >= WINDOWS + 2);
      },
      60_000,
    );
    const exits = await Promise.all(instances.map((i) => i.stop()));
    expect(exits).toEqual(instances.map(() => ({ code: 0, signal: null })));

    for (const job of JOB_NAMES) {
      const rows = await runs(job);
      const slots = rows.map((r) => r.slot);
      expect(rows.length).toBeGreaterThanOrEqual(WINDOWS + 2);
      // Exactly one run per window (the key would refuse a second one, so also check no attempt
      // failed below), and no window missed from the first to the last.
      expect(new Set(slots).size).toBe(slots.length);
      // A gap is reported with the runs on either side (who, when on the server clock, how long).
      const gaps = rows.slice(1).flatMap((r, k) => {
        const before = rows[k] as RunRow;
        if (r.slot - before.slot === INTERVAL) return [];
        const show = (x: RunRow) => ({
          slot: x.slot,
          instance: x.instance,
          claimedAt: x.claimedAt,
          durationMs: x.durationMs,
        });
        return [{ missed: (r.slot - before.slot) / INTERVAL - 1, before: show(before), after: show(r) }];
      });
      expect({ job, gaps }).toEqual({ job, gaps: [] });
      expect(rows.filter((r) => !r.finished || r.error !== null)).toEqual([]);
      // The window is the database clock's: the server's own claim time lies inside it, even for
      // the runs of the instance whose clock is a minute ahead.
      expect(rows.filter((r) => r.claimedAt < r.slot || r.claimedAt >= r.slot + INTERVAL)).toEqual([]);
      expect(rows.some((r) => r.instance === 'c')).toBe(true);
    }

    // Each process took part throughout and none of its attempts failed; the runs it counted are
    // exactly the rows it holds in the table. (A window in which another instance held the lock to
    // the end gives neither a run nor a lost claim, hence lock_not_acquired in the count.)
    for (const i of instances) {
      const closed = i.lines.find((l) => l.event === 'closed');
      const counters = (closed?.counters ?? {}) as Record<string, number>;
      for (const job of JOB_NAMES) {
        const n = (name: string, extra = '') =>
          counters[`sluice_scheduler_${name}_total{job_name=${job}${extra}}`] ?? 0;
        const ran = n('runs', ',result=success');
        expect({ id: i.id, job, errors: n('runs', ',result=error') }).toEqual({ id: i.id, job, errors: 0 });
        expect(ran + n('claim_lost') + n('lock_not_acquired')).toBeGreaterThanOrEqual(0.8 * WINDOWS);
        expect(ran).toBe((await runs(job)).filter((r) => r.instance === i.id).length);
      }
      expect(quiet(i)).toEqual([]);
    }
  }, 90_000);
});

describe('a lock holder that dies mid-run', () => {
  const INTERVAL = 300;
  const downsampleOnly = {
    SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: String(INTERVAL),
    SLUICE_JOB_PURGE_INTERVAL_MS: '0',
    SLUICE_JOB_PARTITIONS_INTERVAL_MS: '0',
    SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS: '0',
    SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS: '0',
  };
  const holding = { ...downsampleOnly, TEST_HOLD_JOB: 'downsample', TEST_HOLD_MS: '30000' };

  async function insertSamples(): Promise<number> {
    await admin.query('TRUNCATE metric_blocks, metric_rollup_invalidations');
    const { events, foldRows } = sampleData(Date.now());
    await writeEvents(storage, events);
    return foldRows;
  }

  it('kill -9: no lock left, the killed run’s writes are absent, the next interval runs on another instance', async () => {
    const foldRows = await insertSamples();
    const a = start('a', holding);
    const held = await a.line((l) => l.event === 'holding', 'hold the lock mid-run');
    expect(held.rows).toBe(foldRows); // it has written its rollups, uncommitted

    const [holder] = await lockHolders('downsample');
    expect(holder?.app).toBe('sluice-scheduler:a');
    expect(await runs()).toEqual([]);
    expect((await admin.query('SELECT 1 FROM metric_rollups_1m')).rowCount).toBe(0);

    const b = start('b', downsampleOnly);
    // b is knocking: its connection exists and the lock is still a's.
    await waitUntil(
      'b to attempt',
      async () =>
        (await admin.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'sluice-scheduler:b'`))
          .rowCount,
      15_000,
    );
    expect(await runs()).toEqual([]);

    a.child.kill('SIGKILL');
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const killedAt = Number(
      (await admin.query(`SELECT floor(extract(epoch FROM now()) * 1000)::bigint AS t`)).rows[0].t,
    );

    await waitUntil(
      'the dead session to release the lock',
      async () => !(await lockHolders('downsample')).some((h) => h.pid === holder?.pid),
      10_000,
    );
    const [first] = await waitUntil(
      'a run by b',
      async () => nonEmpty((await runs()).filter((r) => r.instance === 'b')),
      10_000,
    );

    // b folded everything itself: nothing of a's run was kept (no claim row, no rollups).
    expect(first).toMatchObject({ instance: 'b', rows: foldRows, error: null });
    expect(first!.slot).toBeLessThanOrEqual(killedAt + 2 * INTERVAL);
    expect((await runs()).filter((r) => r.instance === 'a')).toEqual([]);
    expect((await admin.query('SELECT 1 FROM metric_rollups_1m')).rowCount).toBeGreaterThan(0);
    expect(await b.stop()).toEqual({ code: 0, signal: null });
    expect(quiet(b)).toEqual([]);
  }, 60_000);

  it('pg_terminate_backend of the holder: its writes roll back, nothing half-written, it recovers', async () => {
    const foldRows = await insertSamples();
    const a = start('a', holding);
    const held = await a.line((l) => l.event === 'holding', 'hold the lock mid-run');
    const [holder] = await lockHolders('downsample');
    expect(holder?.app).toBe('sluice-scheduler:a');

    await admin.query('SELECT pg_terminate_backend($1)', [holder!.pid]);

    // The job is told its session is gone and stops holding at once.
    const released = await a.line((l) => l.event === 'released', 'notice the cut session', 5000);
    expect(released.aborted).toBe(true);
    expect(await lockHolders('downsample')).not.toContainEqual(expect.objectContaining({ pid: holder!.pid }));

    // Its next window runs normally; that run had to fold everything again, so nothing of the cut
    // run survived — not the claim, not the rollups, not the taken invalidation log.
    const [next] = await waitUntil(
      'a run after the cut',
      async () => nonEmpty(await runs('downsample')),
      10_000,
    );
    expect(next).toMatchObject({ instance: 'a', rows: foldRows, error: null });
    expect(next!.slot).toBeGreaterThan(Math.floor(Number(held.now) / INTERVAL) * INTERVAL);
    expect(a.lines.some((l) => /scheduler connection failed during a run/.test(String(l.msg)))).toBe(true);
    expect(await a.stop()).toEqual({ code: 0, signal: null });
    expect(a.lines.filter((l) => l.level === 'error' || l.level === 'fatal')).toEqual([]);
  }, 60_000);
});

describe('advisory locks leave nothing behind', () => {
  const INTERVAL = 300;

  /** Advisory locks held by a session outside any transaction: a lock that outlived its run. */
  async function lingering(): Promise<Array<{ pid: number; app: string; key: string }>> {
    const { rows } = await admin.query<{ pid: number; app: string; key: string }>(
      `SELECT l.pid, a.application_name AS app, (l.classid::bigint << 32 | l.objid::bigint)::text AS key
         FROM pg_locks l JOIN pg_stat_activity a USING (pid)
        WHERE l.locktype = 'advisory' AND l.granted AND a.state = 'idle' AND a.datname = current_database()`,
    );
    return rows;
  }

  it('after every job run on every instance, and every migrate and partition step, no advisory lock is held', async () => {
    const every = {
      SLUICE_JOB_DOWNSAMPLE_INTERVAL_MS: String(INTERVAL),
      SLUICE_JOB_PURGE_INTERVAL_MS: String(INTERVAL),
      SLUICE_JOB_PARTITIONS_INTERVAL_MS: String(INTERVAL),
      SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS: String(INTERVAL),
      SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS: String(INTERVAL),
    };
    const instances = [start('a', every), start('b', every)];
    for (const i of instances) await i.line((l) => l.event === 'started', 'start');
    await insertSamplesOnce();

    // Sampled while the instances run their jobs and this process migrates and makes partitions:
    // a lock seen on an idle session is a leak if it is still there a moment later (the two views
    // are read one after the other, so a run that just committed can show once).
    const leaks: unknown[] = [];
    const deadline = Date.now() + 40 * INTERVAL;
    while (Date.now() < deadline) {
      await storage.migrate();
      await storage.ensurePartitions();
      const seen = await lingering();
      if (seen.length > 0) {
        await new Promise((r) => setTimeout(r, 100));
        const still = await lingering();
        leaks.push(...still.filter((s) => seen.some((x) => x.pid === s.pid && x.key === s.key)));
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(leaks).toEqual([]);
    const { rows } = await admin.query('SELECT job, count(*) AS n FROM scheduler_runs GROUP BY job');
    expect(rows.map((r) => r.job).sort()).toEqual([...JOB_NAMES].sort());

    expect(await Promise.all(instances.map((i) => i.stop()))).toEqual(
      instances.map(() => ({ code: 0, signal: null })),
    );
    // This database's only: the server is shared with other test files (and their migrations).
    const { rows: left } = await admin.query(
      `SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    expect(left).toEqual([]);
  }, 60_000);

  async function insertSamplesOnce(): Promise<void> {
    const { events } = sampleData(Date.now());
    await writeEvents(storage, events);
  }
});
