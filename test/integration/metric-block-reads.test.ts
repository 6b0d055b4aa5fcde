/**
 * PostgreSQL's reads of metric samples stored as blocks (migration 009) read only the blocks of
 * the minutes they need, with the rows a read of every sample in `(ts, id)` order gives: a page of
 * metric events (newest first, with a name, a cursor, a window), a raw metric read (oldest first,
 * from / to / after) and a series' kind. Blocks are written here with SQL, several a minute, over
 * three days; each read's plan is run with EXPLAIN ANALYZE and its blocks counted.
 */
import pg from 'pg';
import type { EventQuery, MetricQuery } from '../../src/storage/port';
import { queryEventsWith } from '../../src/storage/layout/events-sql';
import { queryMetricNamesWith } from '../../src/storage/layout/activity-sql';
import type { ReadRunner } from '../../src/storage/layout/read-runner';
import { MIGRATIONS } from '../../src/storage/postgres/migrations';
import { PG_ACTIVITY_DIALECT } from '../../src/storage/postgres/activity-dialect';
import { PG_EVENTS_DIALECT } from '../../src/storage/postgres/query-events';
import { queryMetrics } from '../../src/storage/postgres/query-metrics';
import { positionalParams } from '../../src/storage/postgres/positional-params';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { BLOCK_COLUMNS } from '../../src/storage/postgres/metric-block-columns';

const MIN = 60_000;
const DAY = 1440 * MIN;
/** 2025-03-01T00:00:00Z: no daily partition, so every block is in the default partition. */
const T0 = Date.UTC(2025, 2, 1);
const DAYS = 3;
const APPS = ['a1', 'a2'];
const NAMES = ['m.x', 'm.y'];
/** The newest minutes, whose groups the rewrite job has not merged yet. */
const UNMERGED_MINUTES = 3;

let db: TestDatabase;
let client: pg.Client;
let totalBlocks = 0;
/** Blocks read by the statements of the last read (rows out of `metric_blocks` scans). */
let blocksRead = 0;

type PlanNode = {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
};

function blocksIn(node: PlanNode): number {
  const own = node['Relation Name']?.startsWith('metric_blocks')
    ? node['Actual Rows'] * node['Actual Loops']
    : 0;
  return own + (node.Plans ?? []).reduce((n, p) => n + blocksIn(p), 0);
}

/** Runs a read's statement, counting the blocks its plan reads. */
async function counted<Row extends pg.QueryResultRow>(
  text: string,
  values: unknown[],
): Promise<pg.QueryResult<Row>> {
  const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
  blocksRead += blocksIn((rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0]!.Plan);
  if (process.env.SHOW_PLANS) {
    const plan = await client.query(`EXPLAIN (ANALYZE, COSTS OFF) ${text}`, values);
    console.log(text + '\n' + plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
  }
  return client.query<Row>(text, values);
}

const run: ReadRunner = {
  async rows<Row>(build: (param: (v: unknown) => string) => string): Promise<Row[]> {
    const { values, param } = positionalParams();
    return (await counted(build(param), values)).rows as Row[];
  },
};

beforeAll(async () => {
  db = await createTestDatabase('metric_block_reads');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  for (const m of MIGRATIONS) await client.query(m.sql);
  // Two blocks a minute per (app, name) (two writes), three samples each, ts odd for summaries.
  await client.query(
    `CREATE TEMP TABLE s AS
     SELECT gen_random_uuid() AS id, $1::bigint + m * 60000 + w * 20000 + k * 997 + (a * 2 + n) * 13 AS ts,
            'a' || (a + 1) AS app, CASE n WHEN 0 THEN 'm.x' ELSE 'm.y' END AS name, w
       FROM generate_series(0, $2::int - 1) m, generate_series(0, 1) w, generate_series(0, 2) k,
            generate_series(0, 1) a, generate_series(0, 1) n`,
    [T0, DAYS * 1440],
  );
  await client.query(
    `INSERT INTO metric_blocks
     SELECT ts - ts % 60000, app, name, array_agg(id ORDER BY ts, id), array_agg(ts ORDER BY ts, id),
            array_agg('1.0'::text ORDER BY ts, id), array_agg('prod'::text ORDER BY ts, id),
            array_agg(CASE WHEN ts % 2 = 0 THEN ts / 1000.0 END ORDER BY ts, id),
            array_agg(CASE WHEN ts % 2 = 1 THEN 3 END ORDER BY ts, id),
            array_agg(CASE WHEN ts % 2 = 1 THEN 1.0 END ORDER BY ts, id),
            array_agg(CASE WHEN ts % 2 = 1 THEN 5.0 END ORDER BY ts, id),
            array_agg(CASE WHEN ts % 2 = 1 THEN 9.0 END ORDER BY ts, id),
            array_agg(NULL::text ORDER BY ts, id), array_agg('{}'::text ORDER BY ts, id)
       FROM s GROUP BY app, name, ts - ts % 60000, w`,
  );
  // As the rewrite job leaves them (migration 012): the groups of the last minutes (within the
  // resend window) unmerged, one of them with a resent copy of a sample; the rest merged.
  await client.query('UPDATE metric_blocks SET merged = true WHERE bucket < $1', [
    T0 + DAYS * DAY - UNMERGED_MINUTES * MIN,
  ]);
  await client.query(
    `INSERT INTO metric_blocks (${BLOCK_COLUMNS})
     SELECT bucket, app, name, id[1:1], ts[1:1], version[1:1], env[1:1], value[1:1], count[1:1], min[1:1],
            max[1:1], sum[1:1], message[1:1], attributes[1:1]
       FROM metric_blocks WHERE bucket = $1 AND app = 'a1' AND name = 'm.x'`,
    [T0 + DAYS * DAY - MIN],
  );
  await client.query(
    `INSERT INTO metric_rollup_invalidations (name, app, bucket)
    SELECT DISTINCT name, app, bucket FROM metric_blocks WHERE bucket >= $1`,
    [T0 + DAYS * DAY - 30 * MIN],
  );
  await client.query('ANALYZE');
  totalBlocks = Number((await client.query('SELECT count(*) AS n FROM metric_blocks')).rows[0].n);
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

beforeEach(() => {
  blocksRead = 0;
});

/** Every sample's `(ts, id)` matching `where`, in `order`, read from the view without bucket bounds. */
async function reference(where: string, values: unknown[], order: 'ASC' | 'DESC', limit: number) {
  const { rows } = await client.query(
    `SELECT ts::float8 AS t, id::text AS key FROM metric_samples WHERE ${where}
      ORDER BY ts ${order}, id ${order} LIMIT ${limit}`,
    values,
  );
  return rows.map((r) => ({ ts: r.t as number, id: r.key as string }));
}

async function page(q: EventQuery) {
  const p = await queryEventsWith(run, q, PG_EVENTS_DIALECT);
  return p.events.map((e) => ({ ts: e.ts, id: e.id }));
}

describe('metric samples as blocks: reads bounded by bucket', () => {
  it('has blocks over three days', () => {
    // Two blocks a minute per group, and the resent copies of two samples.
    expect(totalBlocks).toBe(DAYS * 1440 * 2 * APPS.length * NAMES.length + 2);
  });

  it('a page of metric events reads the newest blocks only', async () => {
    expect(await page({ limit: 50, type: 'metric' })).toEqual(await reference('true', [], 'DESC', 50));
    // The newest minutes' groups are unmerged: their blocks are read by the scan and again by the
    // merge of their group, with a probe of each group's unmerged blocks.
    expect(blocksRead).toBeLessThan(90);
  });

  it('with a name, a cursor and a window, pages read their minutes only', async () => {
    const before = { ts: T0 + DAY + 333 * MIN + 20_000 + 997, id: 'ffffffff-ffff-ffff-ffff-ffffffffffff' };
    expect(await page({ limit: 40, type: 'metric', name: 'm.y', before })).toEqual(
      await reference(`name = 'm.y' AND (ts, id) < ($1, $2::uuid)`, [before.ts, before.id], 'DESC', 40),
    );
    const from = T0 + 2 * DAY + 7 * MIN + 5_000;
    const to = T0 + 2 * DAY + 9 * MIN + 45_000;
    expect(await page({ limit: 100, from, to })).toEqual(
      await reference('ts >= $1 AND ts < $2', [from, to], 'DESC', 100),
    );
    expect(blocksRead).toBeLessThan(60);
  });

  it('a scan-bounded page reads as far as its bound', async () => {
    const q: EventQuery = { limit: 20, type: 'metric', env: 'none', scanLimit: 200 };
    const p = await queryEventsWith(run, q, PG_EVENTS_DIALECT);
    expect(p.events).toEqual([]);
    expect(p.next).toEqual((await reference('true', [], 'DESC', 200))[199]);
    expect(blocksRead).toBeLessThan(280);
  });

  it('a raw metric read reads its blocks in order', async () => {
    const q: MetricQuery = {
      names: NAMES,
      app: 'a2',
      resolution: 'raw',
      limit: 100,
      from: T0 + DAY + 10 * MIN + 30_000,
      to: T0 + DAY + 500 * MIN,
      after: { ts: T0 + DAY + 20 * MIN + 20_997, key: '00000000-0000-0000-0000-000000000000' },
    };
    const { points } = await queryMetrics(counted, q);
    const expected = await reference(
      `app = 'a2' AND ts >= $1 AND ts < $2 AND (ts, id) > ($3, $4::uuid)`,
      [q.from, q.to, q.after!.ts, q.after!.key],
      'ASC',
      100,
    );
    expect(points.map((p) => p.ts)).toEqual(expected.map((r) => r.ts));
    expect(blocksRead).toBeLessThan(120);
  });

  it("a metric name's kind reads the first blocks of its newest bucket", async () => {
    const page = await queryMetricNamesWith(
      run,
      {
        from: T0 + DAYS * DAY - DAY,
        to: T0 + DAYS * DAY,
        limit: 10,
        scanLimit: 40,
        appsPerName: 10,
        rowsPerName: 100,
      },
      PG_ACTIVITY_DIALECT,
    );
    expect(page.names).toHaveLength(NAMES.length);
    expect(page.names.every((s) => s.kind !== null && s.apps.length === APPS.length)).toBe(true);
    expect(blocksRead).toBeLessThan(40);
  });
});
