import type { Principal } from '../auth/api-keys';
import type { Clock } from '../clock';
import type { EventLimits } from '../events/limits';
import type { EventType, TelemetryEvent } from '../events/types';
import type { IntakeService } from '../intake/intake-service';
import { clampRetryAfter } from '../intake/retry-after';
import type { SentryMetrics } from '../metrics/sentry-instruments';
import type { OutcomeSubject } from '../loss-map/event-outcomes';
import type { OutcomeCount } from '../loss-map/outcome';
import { clientReportCounts } from './client-report';
import { EnvelopeError, parseEnvelope, type EnvelopeItem } from './envelope';
import { mapSentryEvent, type SentryMappingContext } from './map-event';
import { mapSentryLogs } from './map-logs';
import { mapSentrySpans, mapSentryTransaction } from './map-transaction';
import { rateLimitsHeader } from './rate-limits';

/** Item types counted under their own name in `sluice_sentry_items_total` (others: `other`). */
const KNOWN_ITEM_TYPES: ReadonlySet<string> = new Set([
  'event',
  'log',
  'client_report',
  'transaction',
  'span',
  'session',
  'sessions',
  'attachment',
  'profile',
  'profile_chunk',
  'replay_event',
  'replay_recording',
  'replay_video',
  'check_in',
  'user_report',
  'feedback',
  'statsd',
]);

/** Item types mapped into events or the loss map; the others are admitted and not stored. */
const MAPPED_ITEM_TYPES: ReadonlySet<string> = new Set([
  'event',
  'log',
  'client_report',
  'transaction',
  'span',
]);

export interface SentryIntakeOptions {
  /** The intake `POST /v1/events` uses, for events built typed. */
  readonly ingest: Pick<IntakeService, 'ingestValidated'>;
  /** The intake's event limits, which mapping keeps every event within. */
  readonly limits: EventLimits;
  /** Most items in one envelope, and events handed to the intake in one call (`SLUICE_MAX_EVENTS_PER_REQUEST`). */
  readonly maxEventsPerCall: number;
  /** Longest `Retry-After` of a refusal (seconds). */
  readonly retryAfterMaxSeconds: number;
  /** Where a client report's counts go (the loss map); none when absent. */
  readonly report?: (counts: readonly OutcomeCount[], payload: unknown) => void;
  /**
   * Where events lost at the collector are counted in the loss map (`rejected` by reason, origin
   * `direct`): those that could not be mapped, and those the intake refused, which a Sentry SDK
   * never sends again (the intake counts a refusal as `throttled`, not final). None when absent.
   */
  readonly countLost?: (subjects: readonly OutcomeSubject[], reason: string) => void;
  readonly clock: Clock;
  readonly metrics: SentryMetrics;
}

/** One request of a Sentry SDK, below HTTP: the app its DSN names, and its body. */
export interface SentryRequest {
  readonly endpoint: 'envelope' | 'store';
  readonly app: string;
  readonly principal: Principal | null;
  readonly body: Buffer;
}

/** What a request came to; the HTTP front only encodes it. */
export type SentryAnswer =
  | {
      /** 200 `{"id": …}`; `rateLimits` set when some items were refused (a partial take). */
      readonly kind: 'admitted';
      readonly eventId: string | null;
      readonly rateLimits: string | null;
    }
  | {
      /** Nothing of what could be stored was admitted: the SDK backs off for `Retry-After`. */
      readonly kind: 'refused';
      readonly status: 429 | 503;
      readonly reason: 'rate_limited' | 'queue_full' | 'storage_unavailable';
      readonly retryAfterSeconds: number;
      readonly rateLimits: string;
    }
  | {
      /** Not an envelope (or not a JSON event for `/store/`): 400, which SDKs do not retry. */
      readonly kind: 'malformed';
      readonly message: string;
    };

/**
 * A Sentry SDK's envelope or store request, end to end below HTTP: read it, map its events and
 * logs typed (map-event.ts, map-logs.ts), its transactions and spans as duration samples
 * (map-transaction.ts), feed its client reports to the loss map, hand the
 * events to the intake whole per app (Sentry SDKs never resend a refused event), and reduce the
 * intake's outcome to Sentry's answer: refused events become `X-Sentry-Rate-Limits` categories,
 * never a silent loss. Items Sluice does not store (sessions, attachments, profiles, …) are
 * admitted and counted, never refused: a 4xx would make an SDK report a failure.
 */
export class SentryIntake {
  constructor(private readonly o: SentryIntakeOptions) {}

  async ingest(request: SentryRequest): Promise<SentryAnswer> {
    const { o } = this;
    const now = o.clock.now();
    const ctx: SentryMappingContext = { limits: o.limits, app: request.app, now };
    let items: readonly EnvelopeItem[];
    let eventId: string | null = null;
    if (request.endpoint === 'store') {
      items = [{ type: 'event', payload: request.body }];
    } else {
      try {
        const envelope = parseEnvelope(request.body, o.maxEventsPerCall);
        items = envelope.items;
        if (typeof envelope.header.event_id === 'string') eventId = envelope.header.event_id;
      } catch (err) {
        if (err instanceof EnvelopeError) return { kind: 'malformed', message: err.message };
        throw err;
      }
    }

    const events: TelemetryEvent[] = [];
    let dropped = 0;
    for (const item of items) {
      const label = KNOWN_ITEM_TYPES.has(item.type) ? item.type : 'other';
      if (!MAPPED_ITEM_TYPES.has(item.type)) {
        o.metrics.items.inc({ type: label, outcome: 'not_stored' });
        continue;
      }
      let payload: unknown;
      try {
        payload = JSON.parse(item.payload.toString('utf8'));
      } catch {
        if (request.endpoint === 'store')
          return { kind: 'malformed', message: 'The body is not a JSON event.' };
        o.metrics.items.inc({ type: label, outcome: 'unmapped' });
        continue;
      }
      if (item.type === 'client_report') {
        o.report?.(clientReportCounts(payload, request.app, now), payload);
        o.metrics.items.inc({ type: label, outcome: 'report' });
      } else if (item.type === 'log') {
        const mapped = mapSentryLogs(payload, ctx);
        events.push(...mapped.events);
        dropped += mapped.droppedAttributes;
        o.metrics.items.inc({ type: label, outcome: mapped.unmapped > 0 ? 'unmapped' : 'event' });
        if (mapped.unmapped > 0) {
          const lost = Array.from({ length: mapped.unmapped }, () => ({
            app: request.app,
            ts: now,
            type: 'log',
          }));
          o.countLost?.(lost, 'ts_out_of_range');
        }
      } else if (item.type === 'transaction' || item.type === 'span') {
        const mapped =
          item.type === 'transaction' ? mapSentryTransaction(payload, ctx) : mapSentrySpans(payload, ctx);
        events.push(...mapped.events);
        dropped += mapped.droppedAttributes;
        o.metrics.items.inc({ type: label, outcome: mapped.unmapped.length > 0 ? 'unmapped' : 'event' });
        for (const reason of mapped.unmapped) {
          o.countLost?.([{ app: request.app, ts: now, type: 'metric' }], reason);
        }
      } else {
        const mapped = mapSentryEvent(payload, ctx);
        if ('unmapped' in mapped) {
          o.metrics.items.inc({ type: label, outcome: 'unmapped' });
          o.countLost?.([{ app: request.app, ts: now, type: 'unknown' }], mapped.unmapped);
          continue;
        }
        events.push(mapped.event);
        dropped += mapped.droppedAttributes;
        eventId ??= mapped.event.id.replaceAll('-', '');
        o.metrics.items.inc({ type: label, outcome: 'event' });
      }
    }
    if (dropped > 0) o.metrics.attributesDropped.inc(dropped);
    return this.admit(events, request.principal, eventId);
  }

  /**
   * Errors first, in calls of their own: they take the fast lane and no app's limit applies to
   * them, so an envelope that mixes errors and logs never has its errors refused with its logs.
   */
  private async admit(
    events: readonly TelemetryEvent[],
    principal: Principal | null,
    eventId: string | null,
  ): Promise<SentryAnswer> {
    const { o } = this;
    const errors = events.filter((e) => e.type === 'error');
    const others = events.filter((e) => e.type !== 'error');
    const refusedTypes = new Set<EventType>();
    let admitted = 0;
    let reason: 'rate_limited' | 'queue_full' | null = null;
    let retryAfter = 0;
    for (const group of [errors, others]) {
      for (let start = 0; start < group.length; start += o.maxEventsPerCall) {
        const part = group.slice(start, start + o.maxEventsPerCall);
        const outcome = await o.ingest.ingestValidated(part, principal, { whole: true });
        if (outcome.kind === 'unavailable') {
          const retryAfterSeconds = clampRetryAfter(outcome.retryAfterSeconds, o.retryAfterMaxSeconds);
          return {
            kind: 'refused',
            status: 503,
            reason: 'storage_unavailable',
            retryAfterSeconds,
            rateLimits: rateLimitsHeader(retryAfterSeconds, new Set(['error']), 'storage_unavailable'),
          };
        }
        admitted += outcome.accepted;
        if (outcome.kind === 'throttled') {
          const refused = outcome.throttled.map((i) => part[i] as TelemetryEvent);
          for (const e of refused) refusedTypes.add(e.type);
          o.countLost?.(refused, outcome.reason);
          // A full lane outranks an app's limit: it says more about what the SDK should hold back.
          if (reason !== 'queue_full') reason = outcome.reason;
          retryAfter = Math.max(retryAfter, outcome.retryAfterSeconds);
        }
      }
    }
    if (reason === null) return { kind: 'admitted', eventId, rateLimits: null };
    const retryAfterSeconds = clampRetryAfter(retryAfter, o.retryAfterMaxSeconds);
    const rateLimits = rateLimitsHeader(retryAfterSeconds, refusedTypes, reason);
    if (admitted > 0) return { kind: 'admitted', eventId, rateLimits };
    return { kind: 'refused', status: 429, reason, retryAfterSeconds, rateLimits };
  }
}
