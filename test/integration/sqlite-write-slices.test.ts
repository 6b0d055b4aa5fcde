import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createLogger } from '../../src/log/logger';
import type { StorageRow } from '../../src/storage/port';
import { createSqliteStorage, type SqliteStorage } from '../../src/storage/sqlite';
import { WRITE_SLICE_ROWS } from '../../src/storage/sqlite/write';
import { tempSqlitePath } from '../support/postgres';
import { telemetryEvent } from '../support/telemetry-events';

/**
 * A writer batch on SQLite is written in transactions of at most `WRITE_SLICE_ROWS` rows with a
 * turn of the event loop between two (better-sqlite3 holds the loop for a whole transaction),
 * and a slice that fails after others committed leaves nothing counted twice when the batch is
 * written again: the rows an earlier try stored count as stored, once.
 */
const ROWS = 5 * WRITE_SLICE_ROWS;

describe('SQLite writer batches in slices', () => {
  const file = tempSqlitePath('write_slices');
  let storage: SqliteStorage;
  let db: Database.Database;

  beforeAll(async () => {
    storage = createSqliteStorage({
      path: file,
      clock: { now: () => Date.now() },
      logger: createLogger('silent'),
    });
    await storage.migrate();
    db = new Database(file, { readonly: true });
  });

  afterAll(async () => {
    db.close();
    await storage.close();
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  const rowsOf = (app: string, n: number): StorageRow[] =>
    Array.from({ length: n }, (_, i) => storage.toRow(telemetryEvent('metric', { app, value: i })));

  const storedCount = (app: string): number =>
    (
      db
        .prepare(
          `SELECT coalesce(sum(count), 0) AS n FROM event_outcomes WHERE app = ? AND outcome = 'stored'`,
        )
        .get(app) as { n: number }
    ).n;

  const sampleCount = (app: string): number =>
    (db.prepare('SELECT count(*) AS n FROM metric_samples WHERE app = ?').get(app) as { n: number }).n;

  it('lets the event loop turn between the transactions of a large batch', async () => {
    let turns = 0;
    let writing = true;
    const spin = (): void => {
      if (!writing) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const result = await storage.writeRows(rowsOf('sliced', ROWS));
    writing = false;
    expect(result).toEqual({ inserted: ROWS });
    expect(sampleCount('sliced')).toBe(ROWS);
    expect(storedCount('sliced')).toBe(ROWS);
    // One turn at least between two slices of WRITE_SLICE_ROWS (more when a slice ran out of time).
    expect(turns).toBeGreaterThanOrEqual(ROWS / WRITE_SLICE_ROWS - 1);
  });

  it('counts the rows of slices committed before a failure once when the batch is written again', async () => {
    const rows = rowsOf('retried', ROWS);
    // A row that cannot be bound (a value SQLite has no type for) in the last slice: the slices
    // before it commit.
    const bad = { ...(rows[ROWS - 10] as object), name: [] } as unknown as StorageRow;
    const withBad = [...rows.slice(0, ROWS - 10), bad, ...rows.slice(ROWS - 10)];
    await expect(storage.writeRows(withBad)).rejects.toThrow(/bind/);
    expect(sampleCount('retried')).toBeGreaterThan(0);

    // The writer's bisection writes the same row objects again, without the refused one.
    const result = await storage.writeRows(rows);
    expect(result).toEqual({ inserted: ROWS });
    expect(sampleCount('retried')).toBe(ROWS);
    expect(storedCount('retried')).toBe(ROWS);

    // A resend of the same events (new row objects) is a duplicate, stored once.
    const resent = rows.map((r) => ({ ...(r as object) }) as unknown as StorageRow);
    const again = await storage.writeRows(resent);
    expect(again.inserted).toBe(0);
    expect(storedCount('retried')).toBe(ROWS);
  });
});
