import pg from 'pg';
import type { TelemetryEvent } from '../../src/events/types';
import { createLogger } from '../../src/log/logger';
import { partitionsJob } from '../../src/scheduler/jobs/partitions';
import type { MaintenanceRunner } from '../../src/storage/maintenance';
import { createPostgresMaintenanceRunner, type PostgresStorage } from '../../src/storage/postgres';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { openPostgresStorage, writeEvents } from '../support/storage';
import { telemetryEvent } from '../support/telemetry-events';

const DAY = 86_400_000;
/** 2026-12-02T12:00:00Z */
const NOW = Date.UTC(2026, 11, 2, 12);
const logger = createLogger('silent');

let db: TestDatabase;
let storage: PostgresStorage;
let admin: pg.Client;
let backend: MaintenanceRunner;
let now = NOW;

function metric(ts: number): TelemetryEvent {
  return telemetryEvent('metric', { name: 'm', ts, app: 'a' });
}

async function partitionOf(id: string): Promise<string | undefined> {
  const { rows } = await admin.query(
    `SELECT tableoid::regclass::text AS p FROM metric_blocks WHERE $1::uuid = ANY (id)`,
    [id],
  );
  return rows[0]?.p;
}

beforeAll(async () => {
  db = await createTestDatabase('sched_partitions');
  storage = openPostgresStorage(db.url, { retentionRawMs: DAY, clock: { now: () => NOW } });
  await storage.migrate();
  admin = new pg.Client({ connectionString: db.url });
  await admin.connect();
  backend = createPostgresMaintenanceRunner({
    connectionString: db.url,
    connectTimeoutMs: 5000,
    jobTimeoutMs: 5000,
    lockTimeoutMs: 1000,
    instance: 'test',
    maxConnections: 1,
    databaseClock: { now: () => now },
    logger,
  });
});

afterAll(async () => {
  await backend?.close();
  await storage?.close();
  await admin?.end();
  await db?.drop();
});

it('creates the coming days ahead on the database clock; inserts never wait for it', async () => {
  // Days without a partition yet: the inserts land in the default partition and succeed.
  const early = [metric(NOW + 5 * DAY), metric(NOW + 6 * DAY + 1), metric(NOW + 30 * DAY)];
  expect(await writeEvents(storage, early)).toEqual({ inserted: 3 });
  expect(await partitionOf(early[0]!.id)).toBe('metric_blocks_default');

  now = NOW + 4 * DAY;
  const job = partitionsJob({ aheadDays: 3 });
  const first = await backend.attempt(job, 1000);
  // Dec 6–9, both tables; the rows already held for Dec 7 and 8 moved in the same transaction.
  expect(first.kind === 'ran' && first.outcome.rows).toBe(8);
  expect(await partitionOf(early[0]!.id)).toBe('metric_blocks_p20261207');
  expect(await partitionOf(early[1]!.id)).toBe('metric_blocks_p20261208');
  expect(await partitionOf(early[2]!.id)).toBe('metric_blocks_default');

  now += 1000;
  const second = await backend.attempt(job, 1000);
  expect(second.kind === 'ran' && second.outcome.rows).toBe(0);
  const { rows } = await admin.query(
    `SELECT count(*) AS n FROM pg_inherits WHERE inhparent = 'events'::regclass`,
  );
  // Dec 1–3 from migrate, Dec 6–9 from the job, and the default.
  expect(Number(rows[0].n)).toBe(3 + 4 + 1);
  const { events } = await storage.queryEvents({ type: 'metric', from: NOW, limit: 10 });
  expect(events.map((e) => e.id).sort()).toEqual(early.map((e) => e.id).sort());
});
