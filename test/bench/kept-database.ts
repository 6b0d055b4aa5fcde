/**
 * A bench database kept between runs: the `reads` suite's data set takes minutes to load, so a
 * database named after the data set (size, apps, days, seed) stays after the run, with a row
 * saying what it holds. A later run reuses it when that row matches the data set, its schema is
 * the current migrations', and its data is young enough not to be purged; else it is dropped and
 * loaded again. Drop one by hand with `DROP DATABASE sluice_bench_reads_…`.
 */
import pg from 'pg';
import { MIGRATIONS } from '../../src/storage/postgres/migrations';

/** What the data set's database holds, as its `bench_reads_dataset` row says. */
export interface KeptDataset {
  readonly events: number;
  readonly seed: number;
  /** The data set's end (epoch milliseconds): its windows end here. */
  readonly endMs: number;
  /** How long loading it took when it was loaded (seconds). */
  readonly loadSeconds: number;
  /** `version:name` of every migration applied, comma-separated. */
  readonly schema: string;
}

/** Data older than this is not reused (the suite's collector keeps raw events 30 days). */
const MAX_AGE_MS = 20 * 86_400_000;

export function urlOf(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The schema the current code migrates to, as `schema_migrations` lists it. */
export function currentSchema(): string {
  return MIGRATIONS.map((m) => `${m.version}:${m.name}`).join(',');
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The data set row of database `name`, or null when it does not exist or holds none. */
export async function readKept(adminUrl: string, name: string): Promise<KeptDataset | null> {
  const exists = await withClient(adminUrl, (c) =>
    c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]),
  );
  if (exists.rowCount === 0) return null;
  return withClient(urlOf(adminUrl, name), async (c) => {
    const table = await c.query("SELECT to_regclass('bench_reads_dataset') IS NOT NULL AS present");
    if (table.rows[0]?.present !== true) return null;
    const { rows } = await c.query<{ events: string; seed: number; end_ms: string; load_seconds: number }>(
      'SELECT events, seed, end_ms, load_seconds FROM bench_reads_dataset',
    );
    const schema = await c.query<{ s: string | null }>(
      "SELECT string_agg(version || ':' || name, ',' ORDER BY version) AS s FROM schema_migrations",
    );
    const row = rows[0];
    if (!row) return null;
    return {
      events: Number(row.events),
      seed: row.seed,
      endMs: Number(row.end_ms),
      loadSeconds: row.load_seconds,
      schema: schema.rows[0]?.s ?? '',
    };
  });
}

/** Why `kept` cannot serve a run of `events` events of `seed` at `nowMs`; null when it can. */
export function staleReason(
  kept: KeptDataset | null,
  events: number,
  seed: number,
  nowMs: number,
): string | null {
  if (kept === null) return 'no database of this data set';
  if (kept.events !== events || kept.seed !== seed) return 'it holds another data set';
  if (kept.schema !== currentSchema()) return 'its schema is not the current migrations';
  if (nowMs - kept.endMs > MAX_AGE_MS) return 'its data is more than 20 days old';
  return null;
}

/** Drops database `name` if it exists and creates it empty. */
export async function recreate(adminUrl: string, name: string): Promise<void> {
  // `name` is one of ours ([a-z0-9_]); names cannot be bind parameters.
  await withClient(adminUrl, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.query(`CREATE DATABASE "${name}"`);
  });
}

/** Records what database `url` now holds (after a complete load: a load cut short records nothing). */
export async function recordKept(url: string, kept: Omit<KeptDataset, 'schema'>): Promise<void> {
  await withClient(url, async (c) => {
    await c.query(
      'CREATE TABLE bench_reads_dataset (events bigint, seed integer, end_ms bigint, load_seconds real)',
    );
    await c.query('INSERT INTO bench_reads_dataset VALUES ($1, $2, $3, $4)', [
      kept.events,
      kept.seed,
      kept.endMs,
      kept.loadSeconds,
    ]);
  });
}
