import type { OutcomeOrigin } from '../loss-map/outcome';

/** What a request's client report tells the intake (`POST /v1/events`' `report` member). */
export interface ReportReading {
  /** `sdk` when the request carried a valid client report (the loss map's origin); default `direct`. */
  readonly origin?: OutcomeOrigin;
  /**
   * Events the report says its sender captured since its previous report, per app, of the types a
   * limit applies to (not errors), before any sampling: the app's demand. Absent without a report:
   * the request's own events are the demand then.
   */
  readonly captured?: ReadonlyMap<string, number>;
}

/** Options of one intake call. */
export interface IngestOptions extends ReportReading {
  /**
   * Take each app's events whole or refuse them whole at the rate limit, and refuse the request
   * whole when no app of it is within its limit (default false: partial, in request order).
   */
  readonly whole?: boolean;
}
