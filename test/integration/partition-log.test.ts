/**
 * A start on a new PostgreSQL database creates a partition per day and table, from the raw
 * retention to the days ahead (about 36 with the defaults): the log says so in one line with the
 * count and the range, not one line per partition.
 */
import { Writable } from 'node:stream';
import { createLogger } from '../../src/log/logger';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { openPostgresStorage } from '../support/storage';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('partition_log');
});

afterAll(() => db.drop());

it('one line for the partitions a migration creates, with their count and range', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  const storage = openPostgresStorage(db.url, {
    logger: createLogger('info', sink),
    partitionsAheadDays: 2,
    retentionRawMs: 7 * 86_400_000,
  });
  try {
    await storage.migrate();
  } finally {
    await storage.close();
  }
  await new Promise((resolve) => setImmediate(resolve));
  const partitionLines = lines.filter((l) => String(l.msg).includes('partition'));
  expect(partitionLines).toHaveLength(1);
  const [line] = partitionLines;
  // 10 days (7 back, today, 2 ahead) of each partitioned table.
  expect(line?.created).toBeGreaterThanOrEqual(20);
  expect(line).toMatchObject({ msg: expect.stringMatching(/^created \d+ PostgreSQL partitions/) });
  expect(line?.fromDay).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  expect(line?.toDay).toMatch(/^\d{4}-\d{2}-\d{2}$/);
});
