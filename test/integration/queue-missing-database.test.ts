/**
 * Queue mode (tier 4) on a database that does not exist yet, with the ingest collector started
 * before any worker (the README's order): the collector creates the database when its role may and
 * migrates it in the background, so reads answer from it; when the role may not, it stops at once
 * with one line that says how to create it. It used to answer ready and 202 while every read
 * answered 503 and the loss map logged the same stack every second.
 */
import crypto from 'node:crypto';
import pg from 'pg';
import { freePort } from '../../src/dev-cluster/free-port';
import { log } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { adminUrl } from '../support/postgres';
import { spawnSluice, waitUntilReady } from '../support/sluice-process';
import { createTestQueue, type TestQueue } from './queue-support';

const suffix = `${process.pid}_${crypto.randomBytes(3).toString('hex')}`;
const created = `sluice_t_qnewdb_${suffix}`;
const missing = `sluice_t_qmissing_${suffix}`;
const role = `sluice_t_qnocreatedb_${suffix}`;

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

/** Lines of a process's output that carry a stack trace. */
const withStack = (output: readonly string[]): string[] => output.filter((l) => /\\n\s+at /.test(l));

/** The messages of a process's JSON log lines (its other lines as they are). */
const messages = (output: readonly string[]): string[] =>
  output.map((l) => (l.startsWith('{') ? String((JSON.parse(l) as { msg?: unknown }).msg) : l));

let queue: TestQueue;

beforeAll(async () => {
  queue = await createTestQueue('missing-db');
  await admin((c) => c.query(`CREATE ROLE "${role}" LOGIN NOCREATEDB`));
});

afterAll(async () => {
  await queue.cleanup();
  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS "${created}" WITH (FORCE)`);
    await c.query(`DROP ROLE IF EXISTS "${role}"`);
  });
});

describe('an ingest collector started before any worker, on a database that does not exist', () => {
  it('creates it when the role may and migrates it in the background: reads answer, nothing repeats', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const p = spawnSluice('serve', {
      ...queue.env,
      SLUICE_MODE: 'ingest',
      SLUICE_DATABASE_URL: urlOf(created),
      SLUICE_PORT: String(port),
      SLUICE_OTLP_PORT: '0',
      SLUICE_DRAIN_DELAY_MS: '0',
      SLUICE_LOG_LEVEL: 'info',
    });
    try {
      await waitUntilReady(p, 'ingest collector', url, 15_000);
      expect((await postEvents(url, [log('qapp')])).status).toBe(202);
      // Reads the database the workers will write: empty, not "Storage is unreachable".
      const read = await waitFor(
        'a read of the created database',
        async () => {
          const r = await getJson(`${url}/v1/events?app=qapp`);
          return r.status === 200 ? r : null;
        },
        15_000,
      );
      expect(read.body.events).toEqual([]);
    } finally {
      expect(await p.stop()).toBe(0);
    }
    const exists = await admin((c) => c.query('SELECT 1 FROM pg_database WHERE datname = $1', [created]));
    expect(exists.rowCount).toBe(1);
    expect(p.output.filter((l) => l.includes('created the database'))).toHaveLength(1);
    expect(p.output.filter((l) => l.includes('does not exist'))).toEqual([]);
    expect(withStack(p.output)).toEqual([]);
  });

  it('stops at once with one line saying how to create it when the role may not', async () => {
    const port = await freePort();
    const p = spawnSluice('serve', {
      ...queue.env,
      SLUICE_MODE: 'ingest',
      SLUICE_DATABASE_URL: urlOf(missing, role),
      SLUICE_PORT: String(port),
      SLUICE_OTLP_PORT: '0',
      SLUICE_DRAIN_DELAY_MS: '0',
    });
    const started = Date.now();
    const code = await Promise.race([
      p.exited,
      new Promise<'still running'>((r) => setTimeout(() => r('still running'), 5000).unref()),
    ]);
    if (code === 'still running') await p.stop();
    // Its last output can arrive after the exit.
    if (p.child.stdout?.readableEnded === false) await new Promise((r) => p.child.stdout?.once('close', r));
    expect({ code, output: p.output }).toEqual({ code: 1, output: p.output });
    expect(Date.now() - started).toBeLessThan(5000);
    const lines = messages(p.output).filter((m) => m.includes(`database "${missing}" does not exist`));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`createdb .*-U ${role} ${missing}`));
    expect(withStack(p.output)).toEqual([]);
  });
});
