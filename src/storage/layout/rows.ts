import type { MetricPoint } from '../port';
import type { AttributeValue, Attributes, EventType, TelemetryEvent } from '../../events/types';

/*
 * The row layout both adapters share: metric events in a narrow
 * `metric_samples` table, every other event in `events`. Pure functions only,
 * so the SQLite adapter uses them too and both map rows identically.
 */

/** One row of `metric_samples`, as written. `attributes` is canonical JSON text. */
export interface MetricSampleRow {
  readonly id: string;
  readonly ts: number;
  readonly app: string;
  readonly name: string;
  readonly version: string | null;
  readonly env: string | null;
  readonly value: number | null;
  readonly count: number | null;
  readonly min: number | null;
  readonly max: number | null;
  readonly sum: number | null;
  readonly message: string | null;
  readonly attributes: string;
}

/** One row of `events` (every type but `metric`), as written. `attributes` is canonical JSON text. */
export interface EventRow {
  readonly id: string;
  readonly ts: number;
  readonly type: EventType;
  readonly app: string;
  readonly name: string;
  readonly version: string | null;
  readonly env: string | null;
  readonly message: string | null;
  readonly error_message: string | null;
  readonly error_kind: string | null;
  readonly error_stack: string | null;
  readonly attributes: string;
}

/**
 * A row read back from either table (the union of both layouts: the other table's columns are
 * null), with numbers already parsed.
 */
export type StoredRow = Omit<MetricSampleRow, never> &
  Omit<EventRow, 'type'> & {
    /** `metric` for `metric_samples` rows. */
    readonly type: string;
  };

// PostgreSQL text cannot hold U+0000, and jsonb rejects unpaired surrogates: either would fail the
// whole batch on every retry. Both adapters store U+FFFD instead, so they keep behaving alike.
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what must be matched
const SUSPECT = /[\u0000\uD800-\uDFFF]/;
// eslint-disable-next-line no-control-regex -- as above
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `s` with U+0000 and unpaired surrogates replaced by U+FFFD; `s` itself when it has none. */
export function storableText(s: string): string {
  // The cheap test first: almost no text has a NUL or a surrogate at all.
  return SUSPECT.test(s) ? s.replace(UNSTORABLE, '\uFFFD') : s;
}

function storableOrNull(s: string | null): string | null {
  return s === null ? null : storableText(s);
}

/** Canonical JSON of attributes: keys sorted by code unit, storable text only. */
export function encodeAttributes(attributes: Attributes): string {
  const parts: string[] = [];
  for (const key of Object.keys(attributes).sort()) {
    const value = attributes[key] as AttributeValue;
    const stored = typeof value === 'string' ? storableText(value) : value;
    parts.push(`${JSON.stringify(storableText(key))}:${JSON.stringify(stored)}`);
  }
  return `{${parts.join(',')}}`;
}

/**
 * Parses stored attributes into a null-prototype object with sorted keys. `JSON.parse` defines
 * `__proto__` as an own property, and assigning it on a null-prototype object does the same, so
 * such a key stays plain data and never reaches `Object.prototype`.
 */
export function decodeAttributes(json: string): Attributes {
  const parsed = JSON.parse(json) as Record<string, AttributeValue>;
  const out: Record<string, AttributeValue> = Object.create(null);
  for (const key of Object.keys(parsed).sort()) out[key] = parsed[key] as AttributeValue;
  return out;
}

/** A metric event as a `metric_samples` row: `value` for a sample, count/min/max/sum for a summary. */
export function toMetricSampleRow(e: TelemetryEvent): MetricSampleRow {
  return {
    id: e.id,
    ts: e.ts,
    app: storableText(e.app),
    name: storableText(e.name),
    version: storableOrNull(e.version),
    env: storableOrNull(e.env),
    value: e.summary === null ? e.value : null,
    count: e.summary?.count ?? null,
    min: e.summary?.min ?? null,
    max: e.summary?.max ?? null,
    sum: e.summary?.sum ?? null,
    message: storableOrNull(e.message),
    attributes: encodeAttributes(e.attributes),
  };
}

/** A non-metric event as an `events` row. */
export function toEventRow(e: TelemetryEvent): EventRow {
  return {
    id: e.id,
    ts: e.ts,
    type: e.type,
    app: storableText(e.app),
    name: storableText(e.name),
    version: storableOrNull(e.version),
    env: storableOrNull(e.env),
    message: storableOrNull(e.message),
    error_message: e.error === null ? null : storableText(e.error.message),
    error_kind: storableOrNull(e.error?.kind ?? null),
    error_stack: storableOrNull(e.error?.stack ?? null),
    attributes: encodeAttributes(e.attributes),
  };
}

/** Splits a batch by destination table, keeping batch order within each. */
export function toRows(events: readonly TelemetryEvent[]): {
  metrics: MetricSampleRow[];
  others: EventRow[];
} {
  const metrics: MetricSampleRow[] = [];
  const others: EventRow[] = [];
  for (const e of events) {
    if (e.type === 'metric') metrics.push(toMetricSampleRow(e));
    else others.push(toEventRow(e));
  }
  return { metrics, others };
}

/** A row of either table back into the event as written (summary avg derived as sum / count). */
export function toTelemetryEvent(row: StoredRow): TelemetryEvent {
  const isSummary = row.count !== null;
  return {
    id: row.id,
    type: row.type as EventType,
    name: row.name,
    ts: row.ts,
    app: row.app,
    version: row.version,
    env: row.env,
    value: isSummary ? null : row.value,
    summary: isSummary ? summaryOf(row.count as number, row) : null,
    error:
      row.error_message === null
        ? null
        : { message: row.error_message, kind: row.error_kind, stack: row.error_stack },
    message: row.message,
    attributes: decodeAttributes(row.attributes),
  };
}

function summaryOf(
  count: number,
  row: Pick<StoredRow, 'min' | 'max' | 'sum'>,
): { count: number; min: number; max: number; sum: number; avg: number } {
  const sum = row.sum ?? 0;
  return { count, min: row.min ?? 0, max: row.max ?? 0, sum, avg: sum / count };
}

/** A `metric_samples` row as read by `queryMetrics`. */
export type MetricPointRow = Pick<StoredRow, 'ts' | 'app' | 'value' | 'count' | 'min' | 'max' | 'sum'>;

/** A raw sample becomes a point of count 1; a summary keeps its own figures. Each says which it is. */
export function toMetricPoint(row: MetricPointRow): MetricPoint {
  if (row.count !== null) return { ts: row.ts, app: row.app, ...summaryOf(row.count, row), kind: 'summary' };
  const v = row.value ?? 0;
  return { ts: row.ts, app: row.app, count: 1, min: v, max: v, sum: v, avg: v, kind: 'sample' };
}
