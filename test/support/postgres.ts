import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const CONNECT_TIMEOUT_MS = 3000;

export interface TestDatabase {
  /** URL of the new, empty database. */
  readonly url: string;
  /** Drops it, ending any connection still open to it. */
  drop(): Promise<void>;
}

/** Admin URL (any database the test role can connect to): `TEST_PG_URL`, else local trust auth. */
export function adminUrl(): string {
  return process.env.TEST_PG_URL ?? DEFAULT_ADMIN_URL;
}

function uniqueSuffix(label: string): string {
  const safe = label
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .slice(0, 24);
  return `${safe}_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
}

async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = adminUrl();
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw new Error(
      `Cannot reach PostgreSQL at ${url} (${(err as Error).message}). Start it with ` +
        '`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`, ' +
        'or point TEST_PG_URL at a server where the role may create databases.',
      { cause: err },
    );
  }
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates a fresh database named `sluice_t_<label>_<pid>_<random>`, so test files run in parallel. */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const name = `sluice_t_${uniqueSuffix(label)}`;
  // Database names cannot be bind parameters; `name` is built from [a-z0-9_] only.
  await withAdmin((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () =>
      withAdmin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(() => undefined),
  };
}

/** A unique path for a SQLite file under the OS temp folder (the folder itself is not created). */
export function tempSqlitePath(label: string): string {
  return path.join(os.tmpdir(), `sluice-t-${uniqueSuffix(label)}`, 'sluice.db');
}
