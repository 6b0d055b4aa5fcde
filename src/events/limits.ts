/** Bounds applied to every event at intake. Lengths are in UTF-16 code units (JavaScript string length). */
export interface EventLimits {
  /** Most attributes per event. Default 32. */
  readonly maxAttributes: number;
  /** Longest attribute key. Default 64. */
  readonly maxAttributeKeyLength: number;
  /** Longest attribute string value, error message or log message. Default 1024. */
  readonly maxStringLength: number;
  /** Longest error stack. Default 16384. */
  readonly maxStackLength: number;
  /** Longest event name. Default 128. */
  readonly maxNameLength: number;
  /** Longest `source.app`, `source.version`, `source.env`, `error.kind`. Default 128. */
  readonly maxSourceLength: number;
  /** Oldest accepted ts, as an age relative to the collector clock (milliseconds). Default 7 days. */
  readonly maxAgeMs: number;
  /** Furthest accepted ts ahead of the collector clock (milliseconds). Default 5 minutes. */
  readonly maxFutureMs: number;
  /**
   * Most distinct apps a collector takes events from in a minute (`intake/app-bound.ts`; 0: no
   * bound), for the hint of `too_many_apps`. Default 1000; absent: not said.
   */
  readonly maxAppsPerMinute?: number;
}
