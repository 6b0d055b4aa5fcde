import type { PostgresStorage } from '../../src/storage/postgres';
import { RowCounter } from '../bench/pg-bench-db';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { openPostgresStorage, writeEvents } from '../support/storage';
import { telemetryEvent } from '../support/telemetry-events';

/*
 * The bench's wait for stored rows polls a cheap count of what is committed (block lengths), then
 * confirms with `metric_samples`, which shows each sample once: a resent sample's copy in its
 * blocks must not make the wait end before every sample is there.
 */

let db: TestDatabase;
let storage: PostgresStorage;
let counter: RowCounter;

beforeAll(async () => {
  db = await createTestDatabase('row_counter');
  storage = openPostgresStorage(db.url);
  await storage.migrate();
  counter = new RowCounter(db.url);
});

afterAll(async () => {
  await counter?.close();
  await storage?.close();
  await db?.drop();
});

const now = Date.now();
const metric = (i: number) =>
  telemetryEvent('metric', { id: `0190f3c2-0000-7000-8000-${String(i).padStart(12, '0')}`, value: i }, now);

describe('the bench row counter', () => {
  it('finds metric samples and events as stored, and times out short of more', async () => {
    await writeEvents(storage, [metric(1), metric(2), telemetryEvent('log', {}, now)]);
    const reached = await counter.waitFor(3, 5000);
    expect(reached.at).not.toBeNull();
    expect(reached.rows).toBe(3);
    const short = await counter.waitFor(4, 200);
    expect(short).toEqual({ at: null, rows: 3 });
  });

  it('does not count a resent copy as a sample still to come', async () => {
    await writeEvents(storage, [metric(1)]);
    expect(await counter.count()).toBe(3);
    // Blocks now hold 3 samples (one a copy): the cheap count says 4, yet only 3 are stored.
    expect((await counter.waitFor(4, 300)).at).toBeNull();
    const arriving = counter.waitFor(4, 10_000);
    await writeEvents(storage, [metric(3)]);
    const reached = await arriving;
    expect(reached.at).not.toBeNull();
    expect(reached.rows).toBe(4);
  });
});
