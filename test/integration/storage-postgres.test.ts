import net from 'node:net';
import pg from 'pg';
import { mergeMetricBlocks } from '../../src/storage/postgres/metric-block-merge';
import type { Clock } from '../../src/clock';
import type { EventType, TelemetryEvent } from '../../src/events/types';
import { createLogger, type Logger } from '../../src/log/logger';
import { type PostgresStorage, type PostgresStorageOptions } from '../../src/storage/postgres';
import { MIGRATIONS } from '../../src/storage/postgres/migrations';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { attrs, telemetryEvent } from '../support/telemetry-events';
import { openPostgresStorage, writeEvents } from '../support/storage';

const DAY_MS = 86_400_000;
/** 2026-12-02T12:00:00Z */
const NOW = Date.UTC(2026, 11, 2, 12);
/** Slack allowed over timeoutMs for a rejection to count as "bounded" (milliseconds). */
const MARGIN_MS = 1500;

const event = (type: EventType, over: Partial<TelemetryEvent> = {}) =>
  telemetryEvent(type, { app: 'pg-only', ...over }, NOW);

/** A logger that keeps its JSON lines, to wait on what the storage reported. */
function capturingLogger(): { logger: Logger; lines: () => { level: string; msg: string }[] } {
  const raw: string[] = [];
  const logger = createLogger('warn', { write: (line: string) => void raw.push(line) });
  return { logger, lines: () => raw.map((l) => JSON.parse(l) as { level: string; msg: string }) };
}

async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** How long a call took to settle, and what it rejected with (`null` when it resolved). */
async function elapsed(call: () => Promise<unknown>): Promise<{ ms: number; error: string | null }> {
  const started = Date.now();
  const error = await call().then(
    () => null,
    // Socket errors come from another realm than jest's sandbox: compare messages, not classes.
    (err: unknown) => String((err as Error).message),
  );
  return { ms: Date.now() - started, error };
}

function dayName(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10).replaceAll('-', '');
}

let db: TestDatabase;
let admin: pg.Client;
const opened: PostgresStorage[] = [];

function open(over: Partial<PostgresStorageOptions> = {}): PostgresStorage {
  const storage = openPostgresStorage(db.url, {
    poolSize: 4,
    partitionsAheadDays: 3,
    retentionRawMs: 2 * DAY_MS,
    clock: { now: () => NOW },
    ...over,
  });
  opened.push(storage);
  return storage;
}

async function partitionsOf(table: string, database: pg.Client = admin): Promise<string[]> {
  const { rows } = await database.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass ORDER BY 1`,
    [table],
  );
  return rows.map((r) => r.name);
}

/** The partition holding an event's row, a metric sample's block, or a metric sample's key. */
async function tableOf(table: 'events' | 'metric_blocks', id: string): Promise<string | undefined> {
  const where = table === 'metric_blocks' ? '$1::uuid = ANY (id)' : 'id = $1';
  const { rows } = await admin.query<{ part: string }>(
    `SELECT tableoid::regclass::text AS part FROM ${table} WHERE ${where}`,
    [id],
  );
  return rows[0]?.part;
}

beforeAll(async () => {
  db = await createTestDatabase('storage_pg');
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  await open().migrate();
});

afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await admin?.end();
  await db?.drop();
});

describe('partitions', () => {
  it('migrate creates daily partitions from now − retention to today + partitionsAheadDays, plus a default', async () => {
    const days = [-2, -1, 0, 1, 2, 3].map((d) => dayName(NOW + d * DAY_MS));

    for (const table of ['events', 'metric_blocks']) {
      expect(await partitionsOf(table)).toEqual(
        [...days.map((d) => `${table}_p${d}`), `${table}_default`].sort(),
      );
    }
    const { rows } = await admin.query<{ bound: string }>(
      `SELECT pg_get_expr(relpartbound, oid) AS bound FROM pg_class WHERE relname = $1`,
      [`events_p${dayName(NOW)}`],
    );
    const midnight = Date.UTC(2026, 11, 2);
    expect(rows[0]?.bound).toBe(`FOR VALUES FROM ('${midnight}') TO ('${midnight + DAY_MS}')`);
  });

  it('ensurePartitions follows the clock, is idempotent and safe concurrently', async () => {
    let now = NOW;
    const clock: Clock = { now: () => now };
    const storages = [open({ clock }), open({ clock }), open({ clock })];
    now = NOW + 2 * DAY_MS;

    await Promise.all(storages.map((s) => s.ensurePartitions()));
    await storages[0]?.ensurePartitions();

    for (const table of ['metric_blocks']) {
      const names = await partitionsOf(table);
      for (const d of [4, 5]) expect(names).toContain(`${table}_p${dayName(NOW + d * DAY_MS)}`);
      expect(names).toHaveLength(6 + 2 + 1);
    }
  });

  it('an event outside every daily partition lands in the default partition and reads back', async () => {
    const storage = open();
    const old = event('log', { ts: Date.UTC(2020, 0, 1) });
    const far = event('metric', { ts: Date.UTC(2031, 5, 1) });

    expect(await writeEvents(storage, [old, far])).toEqual({ inserted: 2 });

    expect(await tableOf('events', old.id)).toBe('events_default');
    expect(await tableOf('metric_blocks', far.id)).toBe('metric_blocks_default');
    const { events } = await storage.queryEvents({ app: 'pg-only', from: Date.UTC(2019, 0, 1), limit: 100 });
    expect(events.map((e) => e.id)).toEqual(expect.arrayContaining([old.id, far.id]));
  });

  it('creating a partition whose day the default partition holds moves those rows instead of failing', async () => {
    const { logger, lines } = capturingLogger();
    let now = NOW;
    const storage = open({ clock: { now: () => now }, logger });
    const day = NOW + 20 * DAY_MS;
    const batch = [
      event('error', { ts: day }),
      event('metric', { ts: day + 1 }),
      event('lifecycle', { ts: day + 2 }),
    ];
    await writeEvents(storage, batch);
    expect(await tableOf('events', batch[0]?.id ?? '')).toBe('events_default');

    now = day - 2 * DAY_MS;
    await storage.ensurePartitions();

    expect(await tableOf('events', batch[0]?.id ?? '')).toBe(`events_p${dayName(day)}`);
    expect(await tableOf('metric_blocks', batch[1]?.id ?? '')).toBe(`metric_blocks_p${dayName(day)}`);
    expect(
      lines().filter((l) => l.level === 'warn' && /default partition held rows/.test(l.msg)),
    ).toHaveLength(2);
    // The events are stored; the sample is written again and read once (migration 012).
    expect((await writeEvents(storage, batch)).inserted).toBe(1);
    const { events } = await storage.queryEvents({ app: 'pg-only', from: day, to: day + 3, limit: 10 });
    expect(events.map((e) => e.id).sort()).toEqual(batch.map((e) => e.id).sort());
  });

  it('leaves a partition it cannot lock in time for the next run, without failing', async () => {
    const { logger, lines } = capturingLogger();
    const day = NOW + 30 * DAY_MS;
    const storage = open({ clock: { now: () => day }, partitionsAheadDays: 0, timeoutMs: 300, logger });
    const reader = new pg.Client({ connectionString: db.url });
    await reader.connect();
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT 1 FROM events LIMIT 1');

      const { ms, error } = await elapsed(() => storage.ensurePartitions());

      expect(error).toBeNull();
      expect(ms).toBeLessThan(300 + MARGIN_MS);
      expect(lines().some((l) => l.level === 'warn' && /will retry/.test(l.msg))).toBe(true);
      expect(await partitionsOf('events')).not.toContain(`events_p${dayName(day)}`);
      expect(await partitionsOf('metric_blocks')).toContain(`metric_blocks_p${dayName(day)}`);
    } finally {
      await reader.query('ROLLBACK');
      await reader.end();
    }
    await storage.ensurePartitions();
    expect(await partitionsOf('events')).toContain(`events_p${dayName(day)}`);
  });
});

describe('migrate', () => {
  it('five concurrent migrate() calls on a fresh database all succeed and apply each migration once', async () => {
    const fresh = await createTestDatabase('migrate_race');
    const storages = Array.from({ length: 5 }, () => open({ connectionString: fresh.url }));
    const client = new pg.Client({ connectionString: fresh.url });
    try {
      await Promise.all(storages.map((s) => s.migrate()));

      await client.connect();
      const { rows } = await client.query<{ version: number }>(
        'SELECT version FROM schema_migrations ORDER BY 1',
      );
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await partitionsOf('events', client)).toHaveLength(6 + 1);
    } finally {
      await client.end();
      await Promise.all(storages.map((s) => s.close()));
      await fresh.drop();
    }
  });
});

describe('timeouts', () => {
  it('rejects ping and writeRows against a closed port within timeoutMs', async () => {
    const storage = open({ connectionString: 'postgres://postgres@127.0.0.1:1/postgres', timeoutMs: 500 });

    const calls = [
      () => storage.ping(),
      () => writeEvents(storage, [event('log')]),
      () => storage.queryEvents({ limit: 1 }),
    ];
    for (const call of calls) {
      const { ms, error } = await elapsed(call);
      expect(error).toMatch(/ECONNREFUSED/);
      expect(ms).toBeLessThan(500 + MARGIN_MS);
    }
  });

  it('rejects ping and writeRows against a server that accepts but never answers within timeoutMs', async () => {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    const storage = open({
      connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
      timeoutMs: 400,
    });
    try {
      for (const call of [() => storage.ping(), () => writeEvents(storage, [event('metric')])]) {
        const { ms, error } = await elapsed(call);
        expect(error).toMatch(/timeout/);
        expect(ms).toBeGreaterThanOrEqual(350);
        expect(ms).toBeLessThan(400 + MARGIN_MS);
      }
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('bounds a blocked statement by timeoutMs, stores nothing of the failed batch, then recovers', async () => {
    const storage = open({ timeoutMs: 400 });
    const batch = [event('metric'), event('log')];
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');

      const { ms, error } = await elapsed(() => writeEvents(storage, batch));

      expect(error).toMatch(/statement timeout|Query read timeout/);
      expect(ms).toBeLessThan(400 + MARGIN_MS);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    expect(await tableOf('metric_blocks', batch[0]?.id ?? '')).toBeUndefined();
    expect(await writeEvents(storage, batch)).toEqual({ inserted: 2 });
  });
});

it('logs an idle connection the server killed instead of crashing, and reconnects', async () => {
  const { logger, lines } = capturingLogger();
  const storage = open({ logger, connectionString: `${db.url}?application_name=sluice_kill_me` });
  await storage.ping();

  const killed = await admin.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'sluice_kill_me'`,
  );
  expect(killed.rowCount).toBe(1);

  await waitFor(() =>
    lines().some((l) => l.level === 'warn' && /idle PostgreSQL connection failed/.test(l.msg)),
  );
  await expect(storage.ping()).resolves.toBeUndefined();
});

describe('write methods', () => {
  const tricky = (): TelemetryEvent[] => [
    event('metric', {
      name: 'a.b',
      value: -0.000123,
      attributes: attrs({ tab: 'a\tb', nl: 'x\ny\r\n', bs: 'C:\\dir\\N', q: '"\'', '\\N': '\\N' }),
    }),
    // Integer-like keys, which objects enumerate first and numerically, and keys out of order.
    event('metric', { name: 'a.order', attributes: attrs({ z: 1, '10': 'x', '2': 'y', a: true }) }),
    event('metric', {
      value: null,
      summary: { count: 2, min: 1, max: 3, sum: 4, avg: 2 },
      version: '',
      env: 'e',
    }),
    event('log', {
      message: 'line1\nline2\ttab \\ back \\N end',
      attributes: attrs({ emoji: '🚀', n: 1e21, f: false }),
    }),
    event('error', { error: { message: 'm\r\n', kind: '', stack: '\\\\' }, message: '' }),
    event('lifecycle', { version: '1.0', env: null }),
  ];

  async function dump(): Promise<string[]> {
    const rows: string[] = [];
    for (const table of ['metric_samples', 'events']) {
      const result = await admin.query<{ row: string }>(
        `SELECT row_to_json(t)::text AS row FROM ${table} t WHERE app = 'methods' ORDER BY id`,
      );
      rows.push(...result.rows.map((r) => r.row));
    }
    return rows;
  }

  it('unnest and copy store identical rows and dedupe each other', async () => {
    const copy = open({ writeMethod: 'copy' });
    const unnest = open({ writeMethod: 'unnest' });
    const batch = tricky().map((e) => ({ ...e, app: 'methods' }));

    expect(await writeEvents(copy, batch)).toEqual({ inserted: batch.length });
    const viaCopy = await dump();
    await admin.query(`DELETE FROM metric_blocks WHERE app = 'methods'`);
    await admin.query(`DELETE FROM events WHERE app = 'methods'`);
    expect(await writeEvents(unnest, batch)).toEqual({ inserted: batch.length });
    const viaUnnest = await dump();

    expect(viaCopy).toHaveLength(batch.length);
    expect(viaUnnest).toEqual(viaCopy);
    const ordered = await admin.query<{ attributes: string }>(
      `SELECT attributes FROM metric_samples WHERE app = 'methods' AND name = 'a.order'`,
    );
    expect(ordered.rows).toEqual([{ attributes: '{"10":"x","2":"y","a":true,"z":1}' }]);
    // No event went in again: each write says so per (app, minute, type), which the writer counts
    // as duplicates. Metric samples are written again (migration 012) and read once, the first copy.
    const samples = batch.filter((e) => e.type === 'metric').length;
    expect(await writeEvents(copy, batch)).toMatchObject({ inserted: samples, redoneForDuplicates: true });
    expect(await writeEvents(copy, [...batch, ...batch])).toMatchObject({ inserted: 2 * samples });
    expect(await writeEvents(unnest, batch)).toMatchObject({ inserted: samples });
    expect(await dump()).toEqual(viaCopy);
    const { events } = await copy.queryEvents({ app: 'methods', limit: 100 });
    expect(events.map((e) => e.id).sort()).toEqual(batch.map((e) => e.id).sort());
  });

  it('copy: a batch meeting a stored row is written again through the deduplicating path, which the next batches take straight away', async () => {
    const copy = open({ writeMethod: 'copy' });
    // An event of `events`: metric samples have no key to meet (migration 012).
    const stored = event('log', { app: 'redo' });
    expect(await writeEvents(copy, [stored])).toEqual({ inserted: 1 });

    const mixed = [event('metric', { app: 'redo' }), stored, event('log', { app: 'redo' })];
    const redone = await writeEvents(copy, mixed);
    expect(redone).toMatchObject({ inserted: 2, redoneForDuplicates: true });
    // What went in, per (app, minute, type): the two new events, not the stored one.
    const stored1 = (e: (typeof mixed)[number]) => ({
      app: 'redo',
      minute: e.ts - (e.ts % 60_000),
      type: e.type,
      count: 1,
    });
    expect(redone.storedBy).toEqual(expect.arrayContaining([stored1(mixed[0]!), stored1(mixed[2]!)]));
    expect(redone.storedBy?.reduce((n, g) => n + g.count, 0)).toBe(2);
    // The next 8 batches skip the fast path: a duplicate among them is no second failed COPY.
    for (let i = 0; i < 8; i++) {
      expect(await writeEvents(copy, [event('metric', { app: 'redo' }), stored])).toMatchObject({
        inserted: 1,
      });
    }
    // Then the fast path is tried again.
    expect(await writeEvents(copy, [stored])).toEqual({
      inserted: 0,
      redoneForDuplicates: true,
      storedBy: [],
    });
    expect(await writeEvents(copy, [event('log', { app: 'redo' })])).toEqual({ inserted: 1 });
    const { events } = await copy.queryEvents({ app: 'redo', limit: 100 });
    expect(events).toHaveLength(12);
  });
});

describe('what a write records beside its rows', () => {
  const MINUTE = 60_000;
  const minuteOf = (ts: number) => ts - (ts % MINUTE);

  async function storedCounts(app: string): Promise<Record<string, number>> {
    const { rows } = await admin.query<{ key: string; n: string }>(
      `SELECT type || '@' || minute AS key, sum(count) AS n FROM event_outcomes
        WHERE app = $1 AND outcome = 'stored' GROUP BY 1`,
      [app],
    );
    return Object.fromEntries(rows.map((r) => [r.key, Number(r.n)]));
  }

  async function invalidations(app: string): Promise<string[]> {
    const { rows } = await admin.query<{ key: string }>(
      `SELECT DISTINCT name || '@' || bucket AS key FROM metric_rollup_invalidations WHERE app = $1 ORDER BY 1`,
      [app],
    );
    return rows.map((r) => r.key);
  }

  describe.each(['copy', 'unnest'] as const)('with the %s write method', (writeMethod) => {
    it('counts stored rows per (minute, type) and logs each (name, minute) of the samples it really inserted', async () => {
      const storage = open({ writeMethod });
      const app = `recorded-${writeMethod}`;
      const t1 = NOW - 3 * MINUTE + 5;
      const t2 = NOW - MINUTE + 7;
      const batch = [
        event('metric', { app, name: 'm.a', ts: t1 }),
        event('metric', { app, name: 'm.a', ts: t1 + 1 }),
        event('metric', { app, name: 'm.b', ts: t1 + 2 }),
        event('metric', { app, name: 'm.a', ts: t2 }),
        event('log', { app, ts: t2 }),
      ];
      expect(await writeEvents(storage, batch)).toEqual({ inserted: 5 });
      const expected = {
        [`metric@${minuteOf(t1)}`]: 3,
        [`metric@${minuteOf(t2)}`]: 1,
        [`log@${minuteOf(t2)}`]: 1,
      };
      expect(await storedCounts(app)).toEqual(expected);
      expect(await invalidations(app)).toEqual(
        [`m.a@${minuteOf(t1)}`, `m.a@${minuteOf(t2)}`, `m.b@${minuteOf(t1)}`].sort(),
      );

      // A resend with one new sample: the event is neither counted nor logged again; the samples
      // are written and counted again (migration 012), until the merge removes their copies and
      // moves their counts to `duplicate`.
      await admin.query('DELETE FROM metric_rollup_invalidations WHERE app = $1', [app]);
      const fresh = event('metric', { app, name: 'm.c', ts: t2 + 1 });
      expect(await writeEvents(storage, [...batch, fresh])).toMatchObject({ inserted: 5 });
      expect(await storedCounts(app)).toEqual({
        ...expected,
        [`metric@${minuteOf(t1)}`]: 6,
        [`metric@${minuteOf(t2)}`]: 3,
      });
      await admin.query('BEGIN');
      await mergeMetricBlocks(admin, {
        beforeMs: NOW,
        groupsPerStatement: 100,
        maxGroups: 100,
        correctCounts: true,
      });
      await admin.query('COMMIT');
      expect(await storedCounts(app)).toEqual({ ...expected, [`metric@${minuteOf(t2)}`]: 2 });
      // Every group written to is logged; folding it again changes nothing.
      expect(await invalidations(app)).toEqual(
        [`m.a@${minuteOf(t1)}`, `m.a@${minuteOf(t2)}`, `m.b@${minuteOf(t1)}`, `m.c@${minuteOf(t2)}`].sort(),
      );
    });

    it('with the loss map off, logs the invalidations and counts nothing', async () => {
      const storage = open({ writeMethod, outcomes: false });
      const app = `unrecorded-${writeMethod}`;
      const ts = NOW - 2 * MINUTE;
      const batch = [event('metric', { app, name: 'm.a', ts }), event('error', { app, ts })];
      expect(await writeEvents(storage, batch)).toEqual({ inserted: 2 });
      expect(await storedCounts(app)).toEqual({});
      expect(await invalidations(app)).toEqual([`m.a@${minuteOf(ts)}`]);
    });

    it('logs and counts text that COPY escapes as the text itself', async () => {
      const storage = open({ writeMethod });
      const app = `escaped-${writeMethod}`;
      const name = 'm\\tab\there\\nnew\nline';
      const ts = NOW - 4 * MINUTE + 3;
      const batch = [event('metric', { app, name, ts }), event('metric', { app, name, ts: ts + 1 })];
      expect(await writeEvents(storage, batch)).toEqual({ inserted: 2 });
      expect(await invalidations(app)).toEqual([`${name}@${minuteOf(ts)}`]);
      expect(await storedCounts(app)).toEqual({ [`metric@${minuteOf(ts)}`]: 2 });
    });

    it('records a sample before 1970 in the minute SQL gives it', async () => {
      const storage = open({ writeMethod });
      const app = `early-${writeMethod}`;
      const ts = -90_001;
      expect(await writeEvents(storage, [event('metric', { app, name: 'm.old', ts })])).toEqual({
        inserted: 1,
      });
      const { rows } = await admin.query<{ bucket: string }>(
        'SELECT bucket FROM metric_rollup_invalidations WHERE app = $1',
        [app],
      );
      // SQL's `ts - ts % 60000` truncates toward zero, as every reader of the log does.
      expect(rows).toEqual([{ bucket: '-60000' }]);
    });
  });
});
