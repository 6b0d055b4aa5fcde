import pg from 'pg';

/** PostgreSQL error codes (Appendix A of its manual). */
const INVALID_CATALOG_NAME = '3D000';
const DUPLICATE_DATABASE = '42P04';
const SAFE_DATABASE_NAME = /^[A-Za-z0-9_]{1,63}$/;

/**
 * The database of SLUICE_DATABASE_URL does not exist and could not be created here. Retrying
 * cannot help: the message says who may create it, and how.
 */
export class DatabaseMissingError extends Error {
  override readonly name = 'DatabaseMissingError';
}

async function withClient<T>(url: string, timeoutMs: number, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** `createdb` with the URL's host, port and user, for the error message. */
function createCommand(target: URL, name: string): string {
  const flags = [
    target.hostname ? `-h ${target.hostname}` : '',
    target.port ? `-p ${target.port}` : '',
    target.username ? `-U ${decodeURIComponent(target.username)}` : '',
  ].filter(Boolean);
  return `createdb ${[...flags, name].join(' ')}`;
}

/**
 * Makes sure the database of `url` exists: when it does not, creates it through the server's
 * `postgres` database if the role may (CREATEDB), else throws `DatabaseMissingError` at once with
 * the command that creates it. Any other failure (the server is down, a wrong password) is thrown
 * as it is, for the caller's start-up retries.
 */
export async function ensureDatabase(url: string, timeoutMs: number): Promise<'existed' | 'created'> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  try {
    await withClient(url, timeoutMs, () => Promise.resolve());
    return 'existed';
  } catch (err) {
    if ((err as { code?: string }).code !== INVALID_CATALOG_NAME) throw err;
  }
  const cannot = (why: string): DatabaseMissingError =>
    new DatabaseMissingError(
      `database "${name}" does not exist, and ${why}. Create it (${createCommand(target, name)}, ` +
        `or CREATE DATABASE "${name}" as a role that may), or point SLUICE_DATABASE_URL at one that exists.`,
    );
  if (!SAFE_DATABASE_NAME.test(name)) throw cannot('its name is not one Sluice creates ([A-Za-z0-9_], 1–63)');
  const admin = new URL(url);
  admin.pathname = '/postgres';
  try {
    await withClient(admin.toString(), timeoutMs, async (c) => {
      // A name cannot be a bind parameter; it was checked against [A-Za-z0-9_] above.
      await c.query(`CREATE DATABASE "${name}"`);
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === DUPLICATE_DATABASE) return 'created'; // created meanwhile by another process
    const role = target.username ? `role "${decodeURIComponent(target.username)}"` : 'this role';
    throw cannot(`${role} could not create it (${(err as Error).message})`);
  }
  return 'created';
}
