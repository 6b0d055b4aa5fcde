import type { EventLimits } from '../events/limits';

/** One event in the wire format of `POST /v1/events` (docs/http-api.md), as the intake takes it. */
export type WireEvent = Record<string, unknown>;

/** The OTLP signals, by the name their route and metrics use. */
export type OtlpSignal = 'logs' | 'metrics' | 'traces';

/** What mapping one export request came to. */
export interface MappedExport {
  /** The events for the intake, in record order. */
  readonly events: WireEvent[];
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
  /** Now (epoch milliseconds): the ts of records that carry no time. */
  readonly now: number;
}

/** A mutable `MappedExport` that mappers fill. */
export class ExportBuilder implements MappedExport {
  readonly events: WireEvent[] = [];
  records = 0;
  readonly unmapped = new Map<string, number>();
  skipped = 0;
  droppedAttributes = 0;

  unmappable(reason: string): void {
    this.unmapped.set(reason, (this.unmapped.get(reason) ?? 0) + 1);
  }
}
