import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { columnList, EVENTS, METRIC_SAMPLES, type TableColumns } from '../layout/columns';
import { copyPayloads, type CopyLine, type CopyPayloads } from './copy-encoding';
import { inTransaction } from './pool';
import { METRIC_BLOCKS_COPY, METRIC_KEYS_COPY, metricBlocksCopy, samplesCopy } from './metric-blocks-copy';
import {
  recordedEventInsert,
  recordedSamplesInsert,
  storedGroupsOf,
  type RecordedInsertResult,
} from './recorded-insert';
import type { StoredGroup } from '../../loss-map/outcome';
import type { WriteResult } from '../port';
import type { RowsWrite } from './row-writer';
import { ERROR_MINUTES_COPY, INVALIDATIONS_COPY, STORED_COUNTS_COPY, storedRecords } from './stored-records';

/** After a batch met an already-stored `(id, ts)`, this many batches go straight to the deduplicating path. */
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

/** Plain `COPY`: the fast path. A row whose `(ts, id)` is stored fails it (23505). */
async function copyDirect(client: pg.PoolClient, sql: string, payload: Buffer): Promise<void> {
  if (payload.length > 0) await copyIn(client, sql, payload);
}

const COPY_EVENTS = `COPY ${EVENTS.table} (${columnList(EVENTS)}) FROM STDIN`;

/**
 * `COPY` into a temporary staging table (in `format`: the samples' fields are binary, the events'
 * lines text), then one statement that inserts and records (counts and logs) only the rows not
 * stored yet (recorded-insert.ts).
 */
async function copyDeduplicated<Row>(
  client: pg.PoolClient,
  t: TableColumns<Row>,
  payload: Buffer | null,
  format: 'binary' | 'text',
  recordedInsert: (stage: string) => string,
): Promise<WriteResult & { storedBy: StoredGroup[] }> {
  if (payload === null || payload.length === 0) return { inserted: 0, storedBy: [] };
  const stage = `sluice_stage_${t.table}`;
  await ensureStagingTable(client, t, stage);
  await copyIn(client, `COPY ${stage} (${columnList(t)}) FROM STDIN (FORMAT ${format})`, payload);
  const result = await client.query<RecordedInsertResult>(recordedInsert(stage));
  const row = result.rows[0];
  return { inserted: row?.inserted ?? 0, storedBy: storedGroupsOf(row, t.table === METRIC_SAMPLES.table) };
}

async function writeDeduplicated(
  client: pg.PoolClient,
  p: CopyPayloads,
  rows: number,
  countStored: boolean,
): Promise<WriteResult> {
  const columns = columnList(EVENTS);
  const [samples, events] = await inTransaction(client, async () => [
    await copyDeduplicated(
      client,
      METRIC_SAMPLES,
      p.metricSamples.length > 0 ? samplesCopy(p.metricSamples) : null,
      'binary',
      (stage) => recordedSamplesInsert(stage, countStored),
    ),
    await copyDeduplicated(client, EVENTS, p.events, 'text', (stage) =>
      recordedEventInsert(
        `INSERT INTO events (${columns}) SELECT ${columns} FROM ${stage} ON CONFLICT DO NOTHING`,
        countStored,
      ),
    ),
  ]);
  const inserted = samples.inserted + events.inserted;
  return countStored && inserted < rows
    ? { inserted, storedBy: [...samples.storedBy, ...events.storedBy] }
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
 * Retries are rare, so that is almost always the whole story. When a row is already stored the
 * COPY fails as a whole (unique violation): the transaction is rolled back on the same connection
 * and the batch written again through the deduplicating path, which then stays in use for the next
 * few batches, since duplicates come in bursts (an SDK resending after a timeout or a collector
 * restart).
 */
export function createCopyWrite({ countStored }: CopyWriteOptions): RowsWrite<CopyLine> {
  let dedupeBatchesLeft = 0;
  return async (client, lines) => {
    const payloads = copyPayloads(lines);
    if (dedupeBatchesLeft > 0) {
      dedupeBatchesLeft--;
      return writeDeduplicated(client, payloads, lines.length, countStored);
    }
    const blocks = payloads.metricSamples.length > 0 ? metricBlocksCopy(payloads.metricSamples) : null;
    // Every row is inserted or none (a duplicate fails the whole COPY), so all of them are recorded.
    const records = storedRecords(eventLinesOf(lines), blocks?.blockKeys ?? [], countStored);
    try {
      await inTransaction(client, async () => {
        // Keys before blocks: a resent sample fails on its key before its block is written.
        if (blocks !== null) {
          await copyDirect(client, METRIC_KEYS_COPY, blocks.keys);
          await copyDirect(client, METRIC_BLOCKS_COPY, blocks.blocks);
        }
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
        ...(await writeDeduplicated(client, payloads, lines.length, countStored)),
        redoneForDuplicates: true,
      };
    }
  };
}
