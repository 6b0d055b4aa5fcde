import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { columnList, EVENTS, type TableColumns } from '../layout/columns';
import { copyPayloads, type CopyLine, type CopyPayloads } from './copy-encoding';
import { inTransaction } from './pool';
import { METRIC_BLOCKS_COPY, metricBlocksCopy, type MetricBlocksPayloads } from './metric-blocks-copy';
import { recordedEventInsert, storedGroupsOf, type RecordedInsertResult } from './recorded-insert';
import type { StoredGroup } from '../../loss-map/outcome';
import type { WriteResult } from '../port';
import type { RowsWrite } from './row-writer';
import { ERROR_MINUTES_COPY, INVALIDATIONS_COPY, STORED_COUNTS_COPY, storedRecords } from './stored-records';

/** After a batch met an already-stored event `(id, ts)`, this many batches go straight to the deduplicating path. */
const DEDUPE_BATCHES_AFTER_CONFLICT = 8;
const UNIQUE_VIOLATION = '23505';

/** Connections that already have their staging tables (temporary tables live as long as the session). */
const staged = new WeakMap<pg.PoolClient, Set<string>>();

function copyIn(client: pg.PoolClient, sql: string, payload: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    // pg's query_timeout also covers this stream: on expiry it errors the stream.
    const stream = client.query(copyFrom(sql));
    stream.on('error', reject);
    stream.on('finish', () => resolve());
    stream.end(payload);
  });
}

async function ensureStagingTable<Row>(
  client: pg.PoolClient,
  t: TableColumns<Row>,
  stage: string,
): Promise<void> {
  let tables = staged.get(client);
  if (tables?.has(stage)) return;
  // ON COMMIT DELETE ROWS empties it at every commit. If the transaction that creates it fails, the
  // connection is destroyed (see withClient), so the memo never outlives the table.
  const columns = t.columns.map((c) => `${c.name} ${c.type}`).join(', ');
  await client.query(`CREATE TEMP TABLE ${stage} (${columns}) ON COMMIT DELETE ROWS`);
  if (tables === undefined) {
    tables = new Set();
    staged.set(client, tables);
  }
  tables.add(stage);
}

/** Plain `COPY`: the fast path. An event whose `(ts, id)` is stored fails it (23505); blocks never do. */
async function copyDirect(client: pg.PoolClient, sql: string, payload: Buffer): Promise<void> {
  if (payload.length > 0) await copyIn(client, sql, payload);
}

const COPY_EVENTS = `COPY ${EVENTS.table} (${columnList(EVENTS)}) FROM STDIN`;

/**
 * `COPY` of the events' lines into a temporary staging table, then one statement that inserts and
 * records (counts and logs) only the events not stored yet (recorded-insert.ts).
 */
async function copyEventsDeduplicated(
  client: pg.PoolClient,
  payload: Buffer,
  countStored: boolean,
): Promise<WriteResult & { storedBy: StoredGroup[] }> {
  if (payload.length === 0) return { inserted: 0, storedBy: [] };
  const t = EVENTS;
  const stage = `sluice_stage_${t.table}`;
  const columns = columnList(t);
  await ensureStagingTable(client, t, stage);
  await copyIn(client, `COPY ${stage} (${columns}) FROM STDIN`, payload);
  const result = await client.query<RecordedInsertResult>(
    recordedEventInsert(
      `INSERT INTO events (${columns}) SELECT ${columns} FROM ${stage} ON CONFLICT DO NOTHING`,
      countStored,
    ),
  );
  const row = result.rows[0];
  return { inserted: row?.inserted ?? 0, storedBy: storedGroupsOf(row, false) };
}

/** A block's app (its UTF-8 bytes as Latin-1 text) as the app's name. */
function appOf(latin1: string): string {
  return Buffer.from(latin1, 'latin1').toString('utf8');
}

/** The blocks' samples as stored groups: every one of them is written. */
function storedGroupsOfBlocks(blocks: MetricBlocksPayloads | null): StoredGroup[] {
  const groups = new Map<string, StoredGroup>();
  for (const b of blocks?.blockKeys ?? []) {
    const key = `${b.minute}\t${b.app}`;
    const g = groups.get(key);
    groups.set(key, {
      app: g?.app ?? appOf(b.app),
      type: 'metric',
      minute: b.minute,
      count: (g?.count ?? 0) + b.samples,
    });
  }
  return [...groups.values()];
}

/**
 * The batch again after an event met its stored copy: the blocks as on the fast path (a resent
 * sample is merged away on read, see metric-block-merge.ts), the events through the deduplicating
 * insert.
 */
async function writeDeduplicated(
  client: pg.PoolClient,
  p: CopyPayloads,
  blocks: MetricBlocksPayloads | null,
  rows: number,
  countStored: boolean,
): Promise<WriteResult> {
  const records = storedRecords([], blocks?.blockKeys ?? [], countStored);
  const events = await inTransaction(client, async () => {
    if (blocks !== null) await copyDirect(client, METRIC_BLOCKS_COPY, blocks.blocks);
    await copyDirect(client, INVALIDATIONS_COPY, records.invalidations);
    await copyDirect(client, STORED_COUNTS_COPY, records.storedCounts);
    return copyEventsDeduplicated(client, p.events, countStored);
  });
  const samples = p.metricSamples.length;
  const inserted = samples + events.inserted;
  return countStored && inserted < rows
    ? { inserted, storedBy: [...storedGroupsOfBlocks(blocks), ...events.storedBy] }
    : { inserted };
}

export interface CopyWriteOptions {
  /** Whether each write counts its stored rows in the loss map (`SLUICE_OUTCOMES`; default on). */
  readonly countStored: boolean;
}

function eventLinesOf(lines: readonly CopyLine[]): Buffer[] {
  const events: Buffer[] = [];
  for (const line of lines) if (!line.metric) events.push(line.bytes);
  return events;
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === UNIQUE_VIOLATION;
}

/**
 * `SLUICE_PG_WRITE_METHOD=copy`: each batch is first `COPY`ed straight into its tables, which costs
 * the server about 0.6 × what a deduplicating insert does, and the batch's records (the rollup
 * invalidation log, the loss map's stored counts; stored-records.ts) are COPYed after its rows.
 * Metric samples are blocks with no key (migration 012): every one is written and counted stored,
 * and a resent one is merged away on read and by the rewrite job, which corrects the count. When
 * an event is already stored the COPY fails as a whole (unique violation): the transaction is
 * rolled back on the same connection and the batch written again with its events through the
 * deduplicating path, which then stays in use for the next few batches, since duplicates come in
 * bursts (an SDK resending after a timeout or a collector restart).
 */
export function createCopyWrite({ countStored }: CopyWriteOptions): RowsWrite<CopyLine> {
  let dedupeBatchesLeft = 0;
  return async (client, lines, origins) => {
    const payloads = copyPayloads(lines, origins);
    const blocks =
      payloads.metricSamples.length > 0
        ? metricBlocksCopy(payloads.metricSamples, payloads.metricOrigins)
        : null;
    if (dedupeBatchesLeft > 0) {
      dedupeBatchesLeft--;
      return writeDeduplicated(client, payloads, blocks, lines.length, countStored);
    }
    // Every row is inserted or none (a stored event fails the whole COPY), so all of them are recorded.
    const records = storedRecords(eventLinesOf(lines), blocks?.blockKeys ?? [], countStored);
    try {
      await inTransaction(client, async () => {
        if (blocks !== null) await copyDirect(client, METRIC_BLOCKS_COPY, blocks.blocks);
        await copyDirect(client, COPY_EVENTS, payloads.events);
        await copyDirect(client, INVALIDATIONS_COPY, records.invalidations);
        await copyDirect(client, ERROR_MINUTES_COPY, records.errorMinutes);
        await copyDirect(client, STORED_COUNTS_COPY, records.storedCounts);
      });
      return { inserted: lines.length };
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      await client.query('ROLLBACK');
      dedupeBatchesLeft = DEDUPE_BATCHES_AFTER_CONFLICT;
      return {
        ...(await writeDeduplicated(client, payloads, blocks, lines.length, countStored)),
        redoneForDuplicates: true,
      };
    }
  };
}
