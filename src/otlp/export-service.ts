import type { Principal } from '../auth/api-keys';
import type { Clock } from '../clock';
import type { EventLimits } from '../events/limits';
import type { IntakeService } from '../intake/intake-service';
import { clampRetryAfter } from '../intake/retry-after';
import type { OtlpMetrics } from '../metrics/otlp-instruments';
import { otlpRejectionHints } from './rejection-hints';
import type { SignalSpec } from './signals';

export interface OtlpExportServiceOptions {
  /** The intake `POST /v1/events` uses (lanes, rate limits, error fast lane), for events built typed. */
  readonly ingest: Pick<IntakeService, 'ingestValidated'>;
  /** The intake's event limits, which mapping keeps every event within. */
  readonly limits: EventLimits;
  /** Most events handed to the intake in one call (`SLUICE_MAX_EVENTS_PER_REQUEST`). */
  readonly maxEventsPerCall: number;
  /** Longest `Retry-After` of a refusal (seconds; `SLUICE_OTLP_RETRY_AFTER_MAX`). */
  readonly retryAfterMaxSeconds: number;
  readonly clock: Clock;
  readonly metrics: OtlpMetrics;
}

/** What one export came to; the HTTP front only encodes it. */
export type ExportAnswer =
  | {
      /** Every record that could be admitted was admitted: 200 with `partial_success` when some were rejected. */
      readonly kind: 'admitted';
      readonly rejected: number;
      readonly message: string;
    }
  | {
      /** Not admitted as a whole: the exporter resends the whole export after `Retry-After`. */
      readonly kind: 'refused';
      readonly status: 429 | 503;
      readonly reason: 'rate_limited' | 'queue_full' | 'storage_unavailable';
      readonly retryAfterSeconds: number;
    };

/**
 * One OTLP export, end to end below HTTP: map the decoded request to typed events (built valid
 * with the rules of events/, so the intake does not validate them again), hand them to the intake, and reduce the intake's outcome to OTLP's answer. OTLP has no
 * per-record retry list, so each app's records are admitted or refused whole (`whole: true` asks
 * the intake for exactly that): a relay's export whose apps are partly over their limits is
 * admitted for the others, and the refused ones are named in `partial_success` (which exporters do
 * not resend); an export refused by a lane, by storage or with every app over its limit is
 * refused whole, and records already admitted when a later part is refused are stored once when
 * the exporter resends, because their ids are deterministic.
 */
export class OtlpExportService {
  private readonly hints: ReadonlyMap<string, string>;

  constructor(private readonly o: OtlpExportServiceOptions) {
    this.hints = otlpRejectionHints(o.limits);
  }

  async export(spec: SignalSpec, request: unknown, principal: Principal | null): Promise<ExportAnswer> {
    const { o } = this;
    const mapped = spec.map(request, {
      limits: o.limits,
      keyApp: principal?.kind === 'ingest' ? principal.app : null,
      now: o.clock.now(),
    });
    const unmapped = [...mapped.unmapped.values()].reduce((a, b) => a + b, 0);
    const signal = spec.signal;
    o.metrics.records.inc({ signal, outcome: 'event' }, mapped.events.length);
    if (mapped.skipped > 0) o.metrics.records.inc({ signal, outcome: 'skipped' }, mapped.skipped);
    if (unmapped > 0) o.metrics.records.inc({ signal, outcome: 'unmapped' }, unmapped);
    if (mapped.droppedAttributes > 0) o.metrics.attributesDropped.inc({ signal }, mapped.droppedAttributes);

    const reasons = new Map<string, number>(mapped.unmapped);
    const overLimit = new Set<string>();
    let retryAfterSeconds = 0;
    for (let start = 0; start < mapped.events.length; start += o.maxEventsPerCall) {
      const part = mapped.events.slice(start, start + o.maxEventsPerCall);
      const outcome = await o.ingest.ingestValidated(part, principal, { whole: true });
      if (outcome.kind === 'unavailable') {
        return {
          kind: 'refused',
          status: 503,
          reason: 'storage_unavailable',
          retryAfterSeconds: clampRetryAfter(outcome.retryAfterSeconds, o.retryAfterMaxSeconds),
        };
      }
      if (outcome.kind === 'throttled' && outcome.limitedOnly && outcome.accepted > 0) {
        // A relay's export: the apps within their limits are admitted, the others refused by name.
        reasons.set('rate_limited', (reasons.get('rate_limited') ?? 0) + outcome.throttled.length);
        for (const index of outcome.throttled) overLimit.add(part[index]?.app ?? '');
        retryAfterSeconds = Math.max(retryAfterSeconds, outcome.retryAfterSeconds);
      } else if (outcome.kind === 'throttled') {
        return {
          kind: 'refused',
          status: 429,
          reason: outcome.reason,
          retryAfterSeconds: clampRetryAfter(outcome.retryAfterSeconds, o.retryAfterMaxSeconds),
        };
      }
      for (const r of outcome.rejected) reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + 1);
    }

    let rejected = 0;
    for (const [reason, n] of reasons) {
      rejected += n;
      o.metrics.rejected.inc({ signal, reason }, n);
    }
    if (rejected === 0) return { kind: 'admitted', rejected: 0, message: '' };
    const detail = [...reasons].map(([reason, n]) => `${reason} ×${n}`).join(', ');
    const hints = [...reasons.keys()].flatMap((reason) => {
      const hint = this.hints.get(reason);
      return hint === undefined ? [] : [` ${reason}: ${hint}.`];
    });
    const limited =
      overLimit.size === 0
        ? ''
        : ` Over their rate limit (resend their records after ${clampRetryAfter(retryAfterSeconds, o.retryAfterMaxSeconds)} s): ${namesOf(overLimit)}.`;
    return {
      kind: 'admitted',
      rejected,
      message: `${rejected} of ${mapped.records} ${spec.recordNoun} rejected: ${detail}.${hints.join('')}${limited}`,
    };
  }
}

/** Apps named in an answer: the first few, then how many more, so an answer stays small. */
const NAMED_APPS = 10;

function namesOf(apps: ReadonlySet<string>): string {
  const names = [...apps].slice(0, NAMED_APPS).join(', ');
  return apps.size > NAMED_APPS ? `${names} and ${apps.size - NAMED_APPS} more` : names;
}
