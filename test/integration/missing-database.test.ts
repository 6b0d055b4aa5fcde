/**
 * Tier 2 on a database that does not exist yet: `SLUICE_DATABASE_URL=…/newdb sluice serve` creates
 * it when its role may, and otherwise stops at once with the command that creates it (it used to
 * retry "does not exist" for 28 s).
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { freePort } from '../../src/dev-cluster/free-port';
import { adminUrl } from '../support/postgres';
import { runCli } from '../support/run-cli';
import { spawnSluice, waitUntilReady } from '../support/sluice-process';

const suffix = `${process.pid}_${crypto.randomBytes(3).toString('hex')}`;
const created = `sluice_t_newdb_${suffix}`;
const missing = `sluice_t_missing_${suffix}`;
const role = `sluice_t_nocreatedb_${suffix}`;

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function urlOf(database: string, user?: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${database}`;
  if (user !== undefined) url.username = user;
  return url.toString();
}

beforeAll(() => admin((c) => c.query(`CREATE ROLE "${role}" LOGIN NOCREATEDB`)));

afterAll(() =>
  admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${created}" WITH (FORCE)`);
    await c.query(`DROP ROLE IF EXISTS "${role}"`);
  }),
);

describe('a SLUICE_DATABASE_URL naming a database that does not exist', () => {
  it('is created when the role may, and the collector starts', async () => {
    const port = await freePort();
    const p = spawnSluice('serve', {
      SLUICE_DATABASE_URL: urlOf(created),
      SLUICE_PORT: String(port),
      SLUICE_OTLP_PORT: '0',
      SLUICE_DRAIN_DELAY_MS: '0',
    });
    try {
      await waitUntilReady(p, 'collector', `http://127.0.0.1:${port}`, 15_000);
    } finally {
      expect(await p.stop()).toBe(0);
    }
    const exists = await admin((c) => c.query('SELECT 1 FROM pg_database WHERE datname = $1', [created]));
    expect(exists.rowCount).toBe(1);
  });

  it('stops the process at once with the command that creates it when the role may not', async () => {
    const run = await runCli(['serve'], {
      SLUICE_DATABASE_URL: urlOf(missing, role),
      SLUICE_PORT: String(await freePort()),
      SLUICE_OTLP_PORT: '0',
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`database "${missing}" does not exist`);
    expect(run.stderr).toMatch(new RegExp(`createdb .*-U ${role} ${missing}`));
    expect(run.tookMs).toBeLessThan(5000);
  });

  it('sluice migrate says the same', async () => {
    const run = await runCli(['migrate'], { SLUICE_DATABASE_URL: urlOf(missing, role) });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`createdb .*-U ${role} ${missing}`));
  });
});
