import type { EventPage, EventQuery } from '../port';

/*
 * How a page of `queryEvents` reads each table, for both adapters (pure; each adapter renders the
 * conditions in its own SQL). A condition is "indexed" when the table's index path serves it in
 * the page's order (ts DESC, id DESC): one equality on a column indexed as (column, ts DESC, id
 * DESC), the time range and the cursor. Every other condition is "residual": checked on each row
 * the index path yields, so a rare value could make a page read the whole table. With a scan
 * bound, such a page reads at most `scanLimit` rows of each table (see `pageOf`).
 */

export type ReadTable = 'events' | 'metric_samples';

/** Columns with an index in page order, preferred first: one of them leads the index path. */
const INDEXED_EQUALITY: Readonly<Record<ReadTable, readonly ('app' | 'name' | 'type')[]>> = {
  // 001_events (app), 004_read_indexes (name, type); both adapters have the same indexes.
  events: ['app', 'name', 'type'],
  // metric_samples_name_ts (name, ts): ties on ts are ordered by id after it, a few rows each.
  // PostgreSQL's blocks: metric_blocks_name_bucket (name, bucket), each minute's samples sorted.
  metric_samples: ['name'],
};

export type EqualityColumn = 'app' | 'name' | 'type' | 'env' | 'version';

export type ReadCondition =
  | { readonly kind: 'equals'; readonly column: EqualityColumn; readonly value: string }
  | { readonly kind: 'attribute'; readonly key: string; readonly value: string }
  /** A LIKE pattern (wildcards of the text escaped with `\`), matched without case. */
  | { readonly kind: 'text'; readonly pattern: string }
  | { readonly kind: 'from'; readonly ts: number }
  | { readonly kind: 'to'; readonly ts: number }
  /** Strictly older than the position (the cursor). */
  | { readonly kind: 'before'; readonly ts: number; readonly id: string }
  /** At or newer than the position (the scan bound). */
  | { readonly kind: 'notBefore'; readonly ts: number; readonly id: string };

export interface TableRead {
  readonly table: ReadTable;
  /** Served by the index path; a scan-bound query uses only these. */
  readonly indexed: readonly ReadCondition[];
  /** Checked row by row. */
  readonly residual: readonly ReadCondition[];
}

/** `text` as a LIKE pattern matching it anywhere, `\` escaping `%`, `_` and `\`. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Per table, the shortest text an index serves (PostgreSQL's trigram index on `events`, migration
 * 11: a shorter text has no trigram to look up). A table absent has no text index.
 */
export type TextIndexes = Readonly<Partial<Record<ReadTable, number>>>;

/**
 * The tables a query reads (metric events live in `metric_samples`, the rest in `events`) and how.
 * A text filter is indexed where `textIndexes` says an index serves it.
 */
export function planEventRead(q: EventQuery, textIndexes: TextIndexes = {}): TableRead[] {
  const tables: ReadTable[] = [];
  if (q.type !== 'metric') tables.push('events');
  if (q.type === undefined || q.type === 'metric') tables.push('metric_samples');
  return tables.map((table) => {
    const equalities: Array<{ column: EqualityColumn; value: string }> = [];
    for (const column of ['app', 'name', 'env', 'version'] as const) {
      const value = q[column];
      if (value !== undefined) equalities.push({ column, value });
    }
    // Every row of metric_samples is a metric: the type needs no condition there.
    if (q.type !== undefined && table === 'events') equalities.push({ column: 'type', value: q.type });
    const lead = INDEXED_EQUALITY[table].find((c) => equalities.some((e) => e.column === c));
    const indexed: ReadCondition[] = [];
    const residual: ReadCondition[] = [];
    for (const e of equalities) (e.column === lead ? indexed : residual).push({ kind: 'equals', ...e });
    if (q.from !== undefined) indexed.push({ kind: 'from', ts: q.from });
    if (q.to !== undefined) indexed.push({ kind: 'to', ts: q.to });
    if (q.before !== undefined) indexed.push({ kind: 'before', ...q.before });
    for (const a of q.attributes ?? []) residual.push({ kind: 'attribute', key: a.key, value: a.value });
    if (q.text !== undefined) {
      const minLength = textIndexes[table];
      const served = minLength !== undefined && [...q.text].length >= minLength;
      (served ? indexed : residual).push({ kind: 'text', pattern: containsPattern(q.text) });
    }
    return { table, indexed, residual };
  });
}

/** Whether a page needs scan bounds: some table has a residual condition and the query set a bound. */
export function needsScanBound(
  q: EventQuery,
  reads: readonly TableRead[],
): q is EventQuery & {
  scanLimit: number;
} {
  return q.scanLimit !== undefined && reads.some((r) => r.residual.length > 0);
}

type Position = { readonly ts: number; readonly id: string };

/** The newer of two positions in page order (ts, then id). */
function newer(a: Position, b: Position): Position {
  return a.ts > b.ts || (a.ts === b.ts && a.id > b.id) ? a : b;
}

/**
 * Where a bounded page stops: of each table's `scanLimit`-th row (null: the table has fewer rows),
 * the newest. Rows older than it are left to the next page in every table, so a page never skips
 * rows that one table read and another did not.
 */
export function scanBoundOf(bounds: ReadonlyArray<Position | null>): Position | null {
  let bound: Position | null = null;
  for (const b of bounds) if (b !== null) bound = bound === null ? b : newer(bound, b);
  return bound;
}

/** The page: a full page continues after its last event, a bounded one after its bound. */
export function pageOf(events: EventPage['events'], limit: number, bound: Position | null): EventPage {
  const last = events[events.length - 1];
  if (last !== undefined && events.length === limit) return { events, next: { ts: last.ts, id: last.id } };
  return { events, next: bound };
}
