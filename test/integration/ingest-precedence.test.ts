import pg from 'pg';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { errorEvent } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * Ingest has precedence over reads on the primary (the defaults a user gets, PostgreSQL). The
 * writer is held pressed for certain by a session holding a SHARE lock on `events`: a write
 * waits on it with its connection in use, as a writer saturated by ingest would be busy, while
 * reads (which take ACCESS SHARE) still run. Eight readers loop over the events page while the
 * writer is pressed, then again once it is not.
 */

const READERS = 8;
const WINDOW_MS = 2000;
const APP = 'precedence';

let db: TestDatabase;
let c: CollectorProcess;
let admin: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase('ingest_precedence');
  c = await startCollectorProcess(
    // A write waiting on the held lock stays in flight for the whole test instead of failing at the
    // default 5 s storage timeout and backing off.
    { SLUICE_DATABASE_URL: db.url, SLUICE_STORAGE_TIMEOUT_MS: '30000' },
    { defaults: 'user' },
  );
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  expect((await postEvents(c.url, [errorEvent(APP)])).status).toBe(202);
  await waitFor('the first event stored', async () => {
    const { rows } = await admin.query<{ n: string }>('SELECT count(*) AS n FROM events');
    return Number(rows[0]?.n) === 1;
  });
});

afterAll(async () => {
  await admin?.end();
  await c?.stop();
  await db?.drop();
});

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${c.url}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (m === null) throw new Error(`${name} is not exported`);
  return Number(m[1]);
}

/** `READERS` loops over the events page for `ms`: the statuses answered. */
async function readFor(ms: number): Promise<number[]> {
  const statuses: number[] = [];
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: READERS }, async () => {
      while (performance.now() < until) {
        const res = await fetch(`${c.url}/v1/events?app=${APP}&limit=50`);
        await res.arrayBuffer();
        statuses.push(res.status);
      }
    }),
  );
  return statuses;
}

it('while the writer is pressed, reads wait their turn and run far fewer; once it is not, they run at once', async () => {
  expect(await metric('sluice_storage_writer_pressed')).toBe(0);
  const blocker = new pg.Client({ connectionString: db.url });
  await blocker.connect();
  let pressedStatuses: number[];
  let deferredWhilePressed: number;
  try {
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE events IN SHARE MODE');
    expect((await postEvents(c.url, [errorEvent(APP), errorEvent(APP)])).status).toBe(202);
    await waitFor('the writer pressed', async () => (await metric('sluice_storage_writer_pressed')) === 1);
    // The first second spends the half second of reads saved up while the writer was idle.
    const first = await readFor(1000);
    expect(first.filter((s) => s !== 200)).toEqual([]);
    pressedStatuses = await readFor(WINDOW_MS);
    deferredWhilePressed = await metric('sluice_storage_reads_deferred_total');
    expect(await metric('sluice_storage_writer_pressed')).toBe(1);
  } finally {
    await blocker.query('ROLLBACK').catch(() => undefined);
    await blocker.end();
  }
  await waitFor('the held write stored', async () => {
    const { rows } = await admin.query<{ n: string }>('SELECT count(*) AS n FROM events');
    return Number(rows[0]?.n) === 3;
  });
  await waitFor(
    'the writer no longer pressed',
    async () => (await metric('sluice_storage_writer_pressed')) === 0,
  );
  const freeStatuses = await readFor(WINDOW_MS);

  // Every read answered: the wait for a turn is bounded by the read timeout, far above these reads.
  expect(pressedStatuses.filter((s) => s !== 200)).toEqual([]);
  expect(freeStatuses.filter((s) => s !== 200)).toEqual([]);
  expect(deferredWhilePressed).toBeGreaterThan(0);
  // Pressed, reads take a tenth of one connection's time; free, up to all four connections'.
  expect(pressedStatuses.length).toBeLessThan(freeStatuses.length / 2);
  expect(await metric('sluice_storage_reads_deferred_total')).toBe(deferredWhilePressed);
  process.stdout.write(
    `ingest precedence: ${pressedStatuses.length} reads in ${WINDOW_MS} ms with the writer pressed, ` +
      `${freeStatuses.length} without; ${deferredWhilePressed} deferred\n`,
  );
}, 60_000);
