import type { EventLimits } from '../events/limits';
import { isTsInWindow } from '../events/ts-window';
import type { Attributes, ErrorDetail, EventType, MetricSummary, TelemetryEvent } from '../events/types';

/** The OTLP signals, by the name their route and metrics use. */
export type OtlpSignal = 'logs' | 'metrics' | 'traces';

/** What mapping one export request came to. */
export interface MappedExport {
  /**
   * The events, in record order, built typed within the intake's limits (the intake takes them
   * without validating them again: IntakeService.ingestValidated).
   */
  readonly events: TelemetryEvent[];
  /** Records (log records, data points, spans) in the request. */
  readonly records: number;
  /** Records that could not become an event, by reason (they count as rejected). */
  readonly unmapped: Map<string, number>;
  /** Records that become no event by design (spans without an error, empty histogram points). */
  readonly skipped: number;
  /** Attributes dropped by the attribute rule (see attributes.ts). */
  readonly droppedAttributes: number;
}

/** What a mapper needs besides the request: the intake's limits, the caller, the clock. */
export interface MappingContext {
  readonly limits: EventLimits;
  /** The app an ingest key is bound to (auth on), used when a resource has no `service.name`. */
  readonly keyApp: string | null;
  /** Now (epoch milliseconds): the ts of records that carry no time, and the middle of the ts window. */
  readonly now: number;
}

/** `source` of an event: what a resource maps to (resource.ts). */
export interface EventSource {
  readonly app: string;
  readonly version: string | null;
  readonly env: string | null;
}

/** What a mapper decides of one event besides its source; absent parts are none. */
export interface EventParts {
  readonly type: EventType;
  readonly name: string;
  readonly ts: number;
  readonly value?: number;
  readonly summary?: MetricSummary;
  readonly error?: ErrorDetail;
  readonly message?: string;
  readonly attributes: Attributes;
}

/** An event whose id is still to be set (ids may digest the rest of the event: event-id.ts). */
export type UnnamedEvent = { id: string } & Omit<TelemetryEvent, 'id'>;

/** The event of `parts` from `source`, with an empty id. */
export function newEvent(source: EventSource, parts: EventParts): UnnamedEvent {
  return {
    id: '',
    type: parts.type,
    name: parts.name,
    ts: parts.ts,
    app: source.app,
    version: source.version,
    env: source.env,
    value: parts.value ?? null,
    summary: parts.summary ?? null,
    error: parts.error ?? null,
    message: parts.message ?? null,
    attributes: parts.attributes,
  };
}

/** A mutable `MappedExport` that mappers fill. */
export class ExportBuilder implements MappedExport {
  readonly events: TelemetryEvent[] = [];
  records = 0;
  readonly unmapped = new Map<string, number>();
  skipped = 0;
  droppedAttributes = 0;

  constructor(private readonly ctx: MappingContext) {}

  unmappable(reason: string): void {
    this.unmapped.set(reason, (this.unmapped.get(reason) ?? 0) + 1);
  }

  /** Takes `event` when its ts lies within the intake's window, else counts it `ts_out_of_range`. */
  add(event: TelemetryEvent): void {
    if (isTsInWindow(event.ts, this.ctx.now, this.ctx.limits)) this.events.push(event);
    else this.unmappable('ts_out_of_range');
  }
}
