import type { Principal } from '../auth/api-keys';
import type { Clock } from '../clock';
import { SluiceError } from '../errors/catalogue';
import type { EventLimits } from '../events/limits';
import type { TelemetryEvent } from '../events/types';
import type { ScannedEvent } from '../events/scan/scanned-event';
import type { StorageRow } from '../storage/port';
import type { IntakeMetrics } from '../metrics/intake-instruments';
import type { Metrics } from '../metrics/instruments';
import type { AppActivity } from '../metrics/app-activity';
import type { CountSink } from '../loss-map/event-outcomes';
import type { EventRateLimiter } from '../ratelimit/event-rate-limiter';
import type { AppBound } from './app-bound';
import { scanBody } from './body-scan';
import type { EventSink } from './event-sink';
import { IntakeDecider } from './intake-decider';
import type { IngestOptions, ReportReading } from './ingest-options';
import type { IntakeDecision } from './intake-decision';
import type { IntakeAnswer } from './intake-answer';
import { recordActivity } from './recorders/activity-recorder';
import { recordLossMap } from './recorders/loss-map-recorder';
import { IntakeMetricsRecorder } from './recorders/metrics-recorder';
import { rawEvents, typedEvents, type RequestEvents } from './request-events';
import type { SamplingAdvisor } from './sampling-advice';

export type { IngestOptions, ReportReading } from './ingest-options';

export interface IntakeServiceOptions<Row = StorageRow> {
  readonly limits: EventLimits;
  /** Most events in one request; more is a 413 for the whole request. */
  readonly maxEventsPerRequest: number;
  /** Where admitted events go: the lanes, or a JetStream stream in queue mode. */
  readonly sink: EventSink<Row>;
  /** Per-app (or per-key) limit on non-error events; null: no limit. */
  readonly rateLimiter: EventRateLimiter | null;
  readonly clock: Clock;
  readonly metrics: Metrics;
  readonly intakeMetrics: IntakeMetrics;
  /** Per-app tally of what was admitted and throttled (the pipeline view's busiest apps); none when absent. */
  readonly activity?: AppActivity;
  /** The loss map's counts of every decision (`OutcomeRecorder.count`); none when absent. */
  readonly outcomes?: CountSink;
  /** The sample rate advised to each app in the answer (sampling-advice.ts); none when absent. */
  readonly advisor?: SamplingAdvisor;
  /** The bound on distinct apps per minute (`app-bound.ts`); none when absent. */
  readonly apps?: Pick<AppBound, 'admits'>;
  /**
   * Writes an event the single pass validated as what the sink holds (`Storage.rowFromScan`, or
   * the queue's message element). Absent: every request takes the typed path (`JSON.parse`, validate).
   */
  readonly rowFromScan?: (body: Uint8Array, event: ScannedEvent) => Row;
}

/**
 * Intake of one request's events, for each front: the events read as the front has them, the one
 * decision loop (`IntakeDecider`), then the recorders that read its decision (Prometheus counts,
 * app activity, the loss map).
 */
export class IntakeService<Row = StorageRow> {
  private readonly decider: IntakeDecider<Row>;
  private readonly metricsRecorder: IntakeMetricsRecorder;
  private readonly activity: AppActivity | undefined;
  private readonly outcomes: CountSink | undefined;
  private readonly limits: EventLimits;
  private readonly maxEventsPerRequest: number;
  private readonly clock: Clock;
  private readonly rowFromScan: IntakeServiceOptions<Row>['rowFromScan'];

  constructor(o: IntakeServiceOptions<Row>) {
    this.decider = new IntakeDecider({ ...o, keysRefusals: o.outcomes !== undefined });
    this.metricsRecorder = new IntakeMetricsRecorder(o.metrics, o.intakeMetrics);
    this.activity = o.activity;
    this.outcomes = o.outcomes;
    this.limits = o.limits;
    this.maxEventsPerRequest = o.maxEventsPerRequest;
    this.clock = o.clock;
    this.rowFromScan = o.rowFromScan;
  }

  /**
   * Admits what it can of one request's events, as they came off the wire: each is validated
   * (events/validate.ts). `whole`: for fronts that have no per-record retry list (OTLP): the rate
   * limit takes an app's events whole while its budget is positive (a debt later windows repay)
   * or refuses all of them; the request is refused whole only when every app of it is refused.
   */
  ingest(
    rawValues: readonly unknown[],
    principal: Principal | null = null,
    options: IngestOptions = {},
  ): Promise<IntakeAnswer> {
    return this.run(rawEvents(rawValues, this.limits), principal, this.clock.now(), options);
  }

  /**
   * `ingest` of a `POST /v1/events` body read in one pass (body-scan.ts): the same answers as
   * `ingest` of the parsed body. Null when the body is not of the shape the pass reads (or no row
   * writer is set): the caller parses it and calls `ingest`. `nextSlice` is awaited between slices
   * of a large body; `checkShape` is the body's shape check, which throws to refuse the body.
   */
  async ingestBody(
    body: Buffer,
    principal: Principal | null,
    nextSlice: () => Promise<void>,
    checkShape: () => void,
    readReport?: (raw: unknown) => ReportReading,
  ): Promise<IntakeAnswer | null> {
    const { rowFromScan } = this;
    if (rowFromScan === undefined) return null;
    const now = this.clock.now();
    const scanned = await scanBody(body, now, {
      limits: this.limits,
      maxEventsPerRequest: this.maxEventsPerRequest,
      rowFromScan,
      nextSlice,
      checkShape,
    });
    if (scanned === null) return null;
    const { report } = scanned;
    const reading = readReport?.(report === null ? undefined : parseOrNull(report)) ?? {};
    return this.run(scanned.events, principal, now, reading);
  }

  /**
   * `ingest` for events a front built typed and valid itself, with the rules and limits of events/
   * (the OTLP and Sentry fronts map their records so): the same intake, without validating them again.
   */
  ingestValidated(
    events: readonly TelemetryEvent[],
    principal: Principal | null = null,
    options: IngestOptions = {},
  ): Promise<IntakeAnswer> {
    return this.run(typedEvents(events), principal, this.clock.now(), options);
  }

  private async run(
    events: RequestEvents<Row>,
    principal: Principal | null,
    now: number,
    options: IngestOptions,
  ): Promise<IntakeAnswer> {
    if (events.count > this.maxEventsPerRequest) {
      this.metricsRecorder.requestRefused('too_many_events');
      throw new SluiceError(
        'too_many_events',
        `Request carries ${events.count} events; at most ${this.maxEventsPerRequest} are allowed.`,
      );
    }
    const decision = await this.decider.decide(events, principal, now, options);
    this.record(decision);
    return decision.answer;
  }

  private record(decision: IntakeDecision): void {
    this.metricsRecorder.record(decision);
    if (this.activity !== undefined) recordActivity(this.activity, decision);
    if (this.outcomes !== undefined) recordLossMap(this.outcomes, decision);
  }
}

/** What the fronts call, whatever the sink holds. */
export type IntakeFronts = Pick<IntakeService<unknown>, 'ingest' | 'ingestBody' | 'ingestValidated'>;

/** A JSON value the scan delimited, or null when it does not parse (a report then is not valid). */
function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
