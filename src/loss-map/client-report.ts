import { isAppName } from '../events/app-name';
import { REJECTION_REASONS } from '../events/rejection';
import { EVENT_TYPES } from '../events/types';
import { isUuid } from '../events/uuid';
import { MINUTE_MS, type ClientReport, type OutcomeCount } from './outcome';

/**
 * Why an SDK lost an event before sending it (docs/sdk.md, "Client reports"): sampled out, evicted
 * from a full buffer, refused at capture, its batch refused whole (a 4xx other than 429),
 * captured after `close()`, or still buffered when the process or page ended without a store.
 */
export const SDK_DROP_REASONS = [
  'sampled',
  'buffer_full',
  'invalid',
  'client_error',
  'closed',
  'unsent_at_exit',
];

/** Most rows in one report. */
export const MAX_REPORT_ROWS = 256;
/** Largest count in one row. */
const MAX_COUNT = 1e9;
const TYPES = new Set<string>(EVENT_TYPES);
const DROP_REASONS = new Set(SDK_DROP_REASONS);
const REJECT_REASONS = new Set(Object.keys(REJECTION_REASONS));

export interface ReportLimits {
  /** Longest `app` (the events' `source.app` limit): a row's app passes the app-name rule of events. */
  readonly maxAppLength: number;
}

/** Why a `report` member was not taken (the request's events still are). */
export type ReportRefusal = { readonly refused: string };

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 && n <= MAX_COUNT;
}

/**
 * The `report` member of a `POST /v1/events` body as counts of the loss map. Each row is a delta
 * since the SDK's previous report: `captured`, `delivered` (taken by a collector), `dropped` by
 * SDK reason, `rejected` by the collector's reason, and `dropped_samples` (optional): samples of
 * aggregated metrics lost before they were folded, by SDK reason, counted in samples. Rows of another app than `onlyApp` (an API
 * key bound to an app) are left out. A report with no rows gives no counts (and needs no id).
 */
export function parseClientReport(
  raw: unknown,
  limits: ReportLimits,
  onlyApp: string | null,
): ClientReport | ReportRefusal | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { refused: 'report' };
  const { id, rows } = raw as { id?: unknown; rows?: unknown };
  if (!Array.isArray(rows) || rows.length > MAX_REPORT_ROWS) return { refused: 'report.rows' };
  if (rows.length === 0) return null;
  if (typeof id !== 'string' || !isUuid(id)) return { refused: 'report.id' };
  const counts: OutcomeCount[] = [];
  for (const row of rows as unknown[]) {
    if (typeof row !== 'object' || row === null) return { refused: 'report.rows' };
    const r = row as Record<string, unknown>;
    const { app, minute, type } = r;
    if (!isAppName(app, limits.maxAppLength)) return { refused: 'report.rows.app' };
    if (typeof minute !== 'number' || !Number.isSafeInteger(minute) || minute % MINUTE_MS !== 0)
      return { refused: 'report.rows.minute' };
    if (typeof type !== 'string' || !TYPES.has(type)) return { refused: 'report.rows.type' };
    if (onlyApp !== null && app !== onlyApp) continue;
    const base = { app, minute, type, origin: 'sdk' as const };
    for (const [field, outcome] of [
      ['captured', 'captured'],
      ['delivered', 'sdk_delivered'],
    ] as const) {
      const n = r[field] ?? 0;
      if (!isCount(n)) return { refused: `report.rows.${field}` };
      if (n > 0) counts.push({ ...base, outcome, reason: '', count: n });
    }
    for (const [field, outcome, reasons] of [
      ['dropped', 'sdk_dropped', DROP_REASONS],
      ['rejected', 'sdk_rejected', REJECT_REASONS],
      ['dropped_samples', 'sdk_samples_dropped', DROP_REASONS],
    ] as const) {
      const byReason = r[field] ?? {};
      if (typeof byReason !== 'object' || byReason === null || Array.isArray(byReason))
        return { refused: `report.rows.${field}` };
      for (const [reason, n] of Object.entries(byReason)) {
        if (!isCount(n)) return { refused: `report.rows.${field}` };
        // A reason this version does not know (a newer collector's or SDK's, or any other text a
        // client sends) is counted as `other`: only the catalogue's reasons are keys.
        if (n > 0)
          counts.push({ ...base, outcome, reason: reasons.has(reason) ? reason : 'other', count: n });
      }
    }
  }
  return { id: id.toLowerCase(), counts };
}
