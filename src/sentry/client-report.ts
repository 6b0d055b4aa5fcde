import { minuteOf, type OutcomeCount } from '../loss-map/outcome';
import { list, record } from '../otlp/scalars';

/**
 * Sentry's discard reasons (https://develop.sentry.dev/sdk/telemetry/client-reports/) as the loss
 * map's SDK-stage reasons: those Sluice's own SDK reports too under its own name, the others
 * under Sentry's; a reason not in this table counts as `other`.
 */
const REASONS: Readonly<Record<string, string>> = {
  sample_rate: 'sampled',
  queue_overflow: 'buffer_full',
  cache_overflow: 'buffer_full',
  buffer_overflow: 'buffer_full',
  ratelimit_backoff: 'ratelimit_backoff',
  network_error: 'network_error',
  send_error: 'send_error',
  before_send: 'before_send',
  event_processor: 'event_processor',
  internal_sdk_error: 'internal_sdk_error',
  insufficient_data: 'insufficient_data',
  backpressure: 'backpressure',
};

/** Sentry data categories of what Sluice stores, as event types; other categories are not counted. */
const TYPES: Readonly<Record<string, 'error' | 'log'>> = {
  error: 'error',
  default: 'error',
  log_item: 'log',
};

/** Largest quantity of one row (a bigger one is not believed, and the row is left out). */
const MAX_QUANTITY = 1e9;
/** Most rows read of one report. */
const MAX_ROWS = 256;

/**
 * A `client_report` item's `discarded_events` of `app` as loss-map counts: each discarded event
 * was captured by the SDK (`captured`) and lost there (`sdk_dropped`, by reason), so the app's
 * identity holds with the events that did arrive (counted `direct` by the intake). The minute is
 * the report's `timestamp` (seconds, or RFC 3339), else `now`'s.
 */
export function clientReportCounts(payload: unknown, app: string, now: number): OutcomeCount[] {
  const report = record<{ timestamp?: unknown; discarded_events?: unknown }>(payload);
  if (report === null) return [];
  const minute = minuteOf(reportTime(report.timestamp, now));
  const counts: OutcomeCount[] = [];
  for (const raw of list<unknown>(report.discarded_events).slice(0, MAX_ROWS)) {
    const row = record<{ reason?: unknown; category?: unknown; quantity?: unknown }>(raw);
    const type = typeof row?.category === 'string' ? TYPES[row.category] : undefined;
    const n = row?.quantity;
    if (
      type === undefined ||
      typeof n !== 'number' ||
      !Number.isSafeInteger(n) ||
      n <= 0 ||
      n > MAX_QUANTITY
    ) {
      continue;
    }
    const reason = (typeof row?.reason === 'string' ? REASONS[row.reason] : undefined) ?? 'other';
    const base = { app, minute, type, origin: 'sdk' as const, count: n };
    counts.push({ ...base, outcome: 'captured', reason: '' }, { ...base, outcome: 'sdk_dropped', reason });
  }
  return counts;
}

/** A report's time further than this from now is not believed: the report counts at now. */
const MAX_SKEW_MS = 60 * 60_000;

function reportTime(v: unknown, now: number): number {
  let ms = NaN;
  if (typeof v === 'number') ms = Math.round(v * 1000);
  else if (typeof v === 'string') ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : `${v}Z`);
  return Number.isFinite(ms) && Math.abs(ms - now) <= MAX_SKEW_MS ? ms : now;
}
