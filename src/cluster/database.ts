import pg from 'pg';

const CONNECT_TIMEOUT_MS = 5000;
const SAFE_DATABASE_NAME = /^[A-Za-z0-9_]{1,63}$/;

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Creates the database of `url` when it does not exist yet (connecting to the server's
 * `postgres` database to do so), so `sluice cluster` works on a fresh local PostgreSQL.
 * Collectors apply the migrations themselves, one at a time under an advisory lock.
 */
export async function ensureDatabase(url: string): Promise<'existed' | 'created'> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  const unreachable = (err: unknown): Error =>
    new Error(
      `cannot reach PostgreSQL at ${target.host} (${(err as Error).message}). Start it ` +
        '(pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) ' +
        'or set SLUICE_DATABASE_URL.',
      { cause: err },
    );
  try {
    await withClient(url, () => Promise.resolve());
    return 'existed';
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') throw unreachable(err);
  }
  if (!SAFE_DATABASE_NAME.test(name)) {
    throw new Error(
      `database "${name}" does not exist, and its name is not one this runner creates ([A-Za-z0-9_])`,
    );
  }
  const admin = new URL(url);
  admin.pathname = '/postgres';
  await withClient(admin.toString(), async (c) => {
    // A name cannot be a bind parameter; it was checked against [A-Za-z0-9_] above.
    await c.query(`CREATE DATABASE "${name}"`).catch((err: { code?: string }) => {
      if (err.code !== '42P04') throw err; // created meanwhile by someone else: fine
    });
  }).catch((err: unknown) => {
    throw (err as { code?: string }).code ? err : unreachable(err);
  });
  return 'created';
}
