/**
 * The loss map's wiring (docs/ARCHITECTURE.md, "The loss map"): part of the composition root.
 */
import type { Registry } from 'prom-client';
import type { ApiKeyRing, Principal } from '../auth/api-keys';
import type { Clock } from '../clock';
import type { Config } from '../config/load';
import type { Logger } from '../log/logger';
import { createOutcomeMetrics } from '../metrics/outcome-instruments';
import { presentedIngestKey } from '../http/presented-ingest-key';
import { parseClientReport } from '../loss-map/client-report';
import type { ReportReading } from '../intake/intake-service';
import { minuteOf, NO_APP, type ClientReport } from '../loss-map/outcome';
import type { AppBound } from '../intake/app-bound';
import type { ShedRequest } from '../intake/shed-rule';
import { OutcomeRecorder } from '../loss-map/outcome-recorder';
import type { Storage } from '../storage/port';
import { isPermanentWriteError } from '../storage/write-errors';

/** The process's recorder, started; null when `SLUICE_OUTCOMES=off`. */
export function startOutcomeRecorder(
  config: Config,
  storage: Pick<Storage, 'writeOutcomes'>,
  registry: Registry,
  clock: Clock,
  logger: Logger,
  /** Resolves true once storage can take the counts (the recorder writes from then on). Default: now. */
  storageReady?: Promise<boolean>,
): OutcomeRecorder | null {
  if (config.outcomes === 'off') return null;
  const recorder = new OutcomeRecorder({
    write: (batch) => storage.writeOutcomes(batch),
    isRowFault: isPermanentWriteError,
    flushIntervalMs: config.outcomesFlushMs,
    clock,
    metrics: createOutcomeMetrics(registry),
    logger: logger.child({ component: 'outcomes' }),
  });
  if (storageReady === undefined) recorder.start();
  else
    void storageReady.then((ready) => {
      if (ready) recorder.start();
    });
  return recorder;
}

/**
 * `POST /v1/events`'s `readReport`: a valid report goes to the recorder (when the loss map is on),
 * marks the request's events as the SDK's and tells the intake what its sender captured (the
 * demand the sampling advice weighs); a body without one, or with one that is not valid (logged
 * at debug: an SDK bug must not cost its events), is `direct`.
 */
export function reportReader(
  recorder: OutcomeRecorder | null,
  maxAppLength: number,
  logger: Logger,
  apps?: { readonly bound: Pick<AppBound, 'admits'>; readonly clock: Clock },
): (raw: unknown, principal: Principal | null) => ReportReading {
  return (raw, principal) => {
    if (raw === undefined) return DIRECT;
    const onlyApp = principal?.kind === 'ingest' ? principal.app : null;
    const parsed = parseClientReport(raw, { maxAppLength }, onlyApp);
    if (parsed === null) return { origin: 'sdk', captured: NOTHING_CAPTURED };
    if ('refused' in parsed) {
      logger.debug({ field: parsed.refused }, 'client report not valid; ignored');
      return DIRECT;
    }
    const report = apps === undefined ? parsed : withinAppBound(parsed, apps.bound, apps.clock.now());
    recorder?.report(report);
    return { origin: 'sdk', captured: capturedByApp(report) };
  };
}

const DIRECT: ReportReading = { origin: 'direct' };
const NOTHING_CAPTURED: ReadonlyMap<string, number> = new Map();

/** What a report says its sender captured, per app, of the types a limit applies to (not errors). */
function capturedByApp(report: ClientReport): ReadonlyMap<string, number> {
  const captured = new Map<string, number>();
  for (const c of report.counts) {
    if (c.outcome === 'captured' && c.type !== 'error')
      captured.set(c.app, (captured.get(c.app) ?? 0) + c.count);
  }
  return captured;
}

/**
 * A report's rows of apps the bound on distinct apps refuses, counted under app `''` as their
 * events are: a report naming invented apps must not add a count per name either.
 */
function withinAppBound(report: ClientReport, bound: Pick<AppBound, 'admits'>, now: number): ClientReport {
  return {
    id: report.id,
    counts: report.counts.map((c) => (bound.admits(c.app, now) ? c : { ...c, app: NO_APP })),
  };
}

/**
 * The shed rule's `countRefused`: one `shed` request in the minute of receipt, of the app of the
 * ingest key it presented when that key is valid (`X-Api-Key`, or a Sentry DSN key:
 * http/presented-ingest-key.ts), else of app `''` (no keys file, no key, a wrong one: a request's
 * claim of an app is not taken on trust, and its body is never read). Checking the key costs a
 * SHA-256 of it, a few microseconds, next to the answer it spares the collector.
 */
export function shedCounter(
  recorder: OutcomeRecorder,
  keyRing: ApiKeyRing | null,
  clock: Clock,
): (request: ShedRequest) => void {
  return (request) => {
    const principal = presentedIngestKey(keyRing, request);
    recorder.count({
      app: principal?.app ?? '',
      minute: minuteOf(clock.now()),
      type: '',
      outcome: 'shed',
      reason: 'overloaded',
      origin: '',
      count: 1,
    });
  };
}
