import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { systemClock } from '../../src/clock';
import { createLogger } from '../../src/log/logger';
import { createPostgresStorage, type PostgresStorage, type WriteMethod } from '../../src/storage/postgres';

const CONNECT_TIMEOUT_MS = 5000;
const RETENTION_MS = 7 * 86_400_000;

/** A database of this bench run; dropped by `BenchDatabases.dropAll`. */
export interface BenchDatabase {
  readonly name: string;
  readonly url: string;
}

function urlOf(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw new Error(
      `Cannot reach PostgreSQL at ${url} (${(err as Error).message}). Start it, or point BENCH_PG_URL at a ` +
        'server where the role may create databases.',
      { cause: err },
    );
  }
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Bytes on disk of the tables of `url`'s public schema (every partition, with its indexes and
 * TOAST): divided by the rows stored, what an event costs on disk.
 */
export function storedBytes(url: string): Promise<number> {
  return withClient(url, async (c) => {
    const { rows } = await c.query<{ bytes: string | null }>(
      `SELECT sum(pg_total_relation_size(c.oid)) AS bytes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r'`,
    );
    return Number(rows[0]?.bytes ?? 0);
  });
}

/** Runs `sql` on the database at `url` (one connection, closed after). */
export async function runSql(url: string, sql: string): Promise<void> {
  await withClient(url, (c) => c.query(sql));
}

/** The Sluice storage on a bench database, as the collector builds it (silent logger). */
export function benchStorage(
  url: string,
  writeMethod: WriteMethod = 'unnest',
  poolSize = 2,
  outcomes = true,
): PostgresStorage {
  return createPostgresStorage({
    outcomes,
    connectionString: url,
    poolSize,
    timeoutMs: 30_000,
    partitionsAheadDays: 3,
    retentionRawMs: RETENTION_MS,
    writeMethod,
    clock: systemClock,
    logger: createLogger('silent'),
  });
}

/**
 * The databases of one bench run, all named `sluice_bench_<run>_<n>`. One template gets the Sluice
 * schema (migrations and daily partitions); every measurement clones it, so each starts from empty
 * tables of the same shape.
 */
export class BenchDatabases {
  private readonly run = `${process.pid}_${randomBytes(3).toString('hex')}`;
  private readonly created: string[] = [];
  private template: string | null = null;
  private counter = 0;

  constructor(private readonly adminUrl: string) {}

  private async create(label: string, template: string | null): Promise<BenchDatabase> {
    const name = `sluice_bench_${this.run}_${this.counter++}_${label.replace(/[^a-z0-9]+/g, '_')}`.slice(
      0,
      63,
    );
    // Names cannot be bind parameters: `name` holds [a-z0-9_] only, `template` is one of ours.
    const sql =
      template === null ? `CREATE DATABASE "${name}"` : `CREATE DATABASE "${name}" TEMPLATE "${template}"`;
    for (let attempt = 0; ; attempt++) {
      try {
        await withClient(this.adminUrl, (c) => c.query(sql));
        break;
      } catch (err) {
        // 55006: the template still has a connection closing; it goes away within milliseconds.
        if ((err as { code?: string }).code !== '55006' || attempt >= 50) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    this.created.push(name);
    return { name, url: urlOf(this.adminUrl, name) };
  }

  /** A new database holding the Sluice schema and no rows. */
  async fresh(label: string): Promise<BenchDatabase> {
    if (this.template === null) {
      const tpl = await this.create('template', null);
      const storage = benchStorage(tpl.url);
      try {
        await storage.migrate();
      } finally {
        await storage.close();
      }
      this.template = tpl.name;
    }
    return this.create(label, this.template);
  }

  /** Drops one database now (frees its disk before the next run). */
  async drop(db: BenchDatabase): Promise<void> {
    const i = this.created.indexOf(db.name);
    if (i === -1) return;
    this.created.splice(i, 1);
    await withClient(this.adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${db.name}" WITH (FORCE)`));
  }

  /** Drops every database this run created, ending connections still open to them. */
  async dropAll(): Promise<void> {
    const names = this.created.splice(0).reverse();
    await withClient(this.adminUrl, async (c) => {
      for (const name of names) await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    });
  }
}

/** `application_name` of the bench's own polling connections, which `PgBackendCpu` leaves out. */
export const BENCH_POLLER = 'sluice-bench-poller';

/**
 * Rows stored: the samples `metric_samples` shows (each once, however many copies its blocks hold)
 * and the events.
 */
const STORED_ROWS = 'SELECT (SELECT count(*) FROM metric_samples) + (SELECT count(*) FROM events) AS n';
/**
 * Rows committed, counted cheaply: each metric block's samples by the length of its ts array, with
 * nothing unnested, plus the events. It is a few milliseconds where counting `metric_samples` took
 * 3–4 s at 1.3 million samples, and a wait that polls only the slow count learns that the last rows
 * are in up to one count late: about a third of a 10 s window's time. A resent sample's copy is
 * counted here until the merge job removes it, so this may exceed `STORED_ROWS`, never fall short.
 */
const COMMITTED_ROWS =
  'SELECT (SELECT coalesce(sum(cardinality(ts)), 0) FROM metric_blocks) + (SELECT count(*) FROM events) AS n';

/** Counts the rows of both Sluice tables; one connection kept for polling. */
export class RowCounter {
  private readonly client: pg.Client;
  private connected: Promise<void> | null = null;

  constructor(url: string) {
    this.client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      application_name: BENCH_POLLER,
    });
    this.client.on('error', () => undefined);
  }

  private async rows(sql: string): Promise<number> {
    this.connected ??= this.client.connect().then(() => undefined);
    await this.connected;
    const { rows } = await this.client.query<{ n: string }>(sql);
    return Number(rows[0]?.n ?? 0);
  }

  /** Rows stored, each sample once. */
  count(): Promise<number> {
    return this.rows(STORED_ROWS);
  }

  /**
   * Polls until the tables hold at least `expected` rows or `timeoutMs` passes. Resolves the
   * `performance.now()` at the start of the first count that reached it, or null on timeout, and
   * the rows stored then. Polls the committed rows (cheap), then confirms with the stored rows;
   * when copies made the committed count run ahead, polls the stored rows themselves.
   */
  async waitFor(
    expected: number,
    timeoutMs: number,
    pollMs = 50,
  ): Promise<{ at: number | null; rows: number }> {
    const deadline = performance.now() + timeoutMs;
    let sql = COMMITTED_ROWS;
    for (;;) {
      // The count is of the snapshot taken when the query starts: that is when the rows were there.
      const at = performance.now();
      const rows = await this.rows(sql);
      if (rows >= expected) {
        if (sql === STORED_ROWS) return { at, rows };
        const stored = await this.count();
        if (stored >= expected) return { at, rows: stored };
        sql = STORED_ROWS;
        continue;
      }
      if (at > deadline) return { at: null, rows: sql === STORED_ROWS ? rows : await this.count() };
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  async close(): Promise<void> {
    if (this.connected) await this.client.end().catch(() => undefined);
  }
}
