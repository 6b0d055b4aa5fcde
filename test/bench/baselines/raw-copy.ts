import type { TelemetryEvent } from '../../../src/events/types';
import { columnList, EVENTS, type TableColumns } from '../../../src/storage/layout/columns';
import { toRows } from '../../../src/storage/layout/rows';
import { toCopyLine } from '../../../src/storage/postgres/copy-encoding';
import { METRIC_BLOCKS_COPY, metricBlocksCopy } from '../../../src/storage/postgres/metric-blocks-copy';
import {
  INVALIDATIONS_COPY,
  STORED_COUNTS_COPY,
  storedRecords,
} from '../../../src/storage/postgres/stored-records';
import { copyText } from '../copy-text';
import { chunked, timeCopy, type CopyChunk, type CopyRunResult } from '../copy-run';

function rowsOf<Row>(t: TableColumns<Row>, rows: readonly Row[]): unknown[][] {
  return rows.map((row) => t.columns.map((c) => row[c.name]));
}

/**
 * The exact rows the collector would write for `events` (its own row mapping), as plain COPY
 * payloads straight into the metric samples' keys and blocks (binary, as the writer makes them)
 * and `events`: no staging table, no conflict check, events in the workload's order; then what
 * storing them records, as the collector's writer COPYs it
 * (the rollup invalidation log and the loss map's stored counts; database triggers wrote these
 * before migration 8, so the baseline paid them then too).
 */
export function sluiceCopyChunks(
  events: readonly TelemetryEvent[],
  eventsPerTransaction: number,
): CopyChunk[] {
  return chunked(events, eventsPerTransaction).map((slice) => {
    const { others } = toRows(slice);
    const lines = slice.map(toCopyLine);
    const blocks = metricBlocksCopy(lines.filter((l) => l.metric).map((l) => l.bytes));
    const eventLines = lines.filter((l) => !l.metric).map((l) => l.bytes);
    const records = storedRecords(eventLines, blocks.blockKeys, true);
    return {
      events: slice.length,
      parts: [
        { sql: METRIC_BLOCKS_COPY, payload: [blocks.blocks] },
        {
          sql: `COPY ${EVENTS.table} (${columnList(EVENTS)}) FROM STDIN`,
          payload: copyText(rowsOf(EVENTS, others)),
        },
        { sql: INVALIDATIONS_COPY, payload: records.invalidations.toString('utf8') },
        { sql: STORED_COUNTS_COPY, payload: records.storedCounts.toString('utf8') },
      ],
    };
  });
}

/**
 * Baseline (a), the storage limit: a local client COPYing the rows of the workload into the
 * Sluice schema on one connection; `chunks` come from `sluiceCopyChunks`, formatted before the
 * clock starts.
 */
export function rawCopy(url: string, chunks: readonly CopyChunk[], maxMs: number): Promise<CopyRunResult> {
  return timeCopy(url, chunks, maxMs);
}
