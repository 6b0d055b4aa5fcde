import type { EventLimits } from '../events/limits';
import { tsWindowText } from '../events/rejection';

/**
 * What to do about the reasons an OTLP record is rejected for, in the words of `POST /v1/events`'
 * hints (events/rejection.ts) but in OTLP's terms: its times are nanoseconds, so a time sent in
 * seconds or milliseconds lands in 1970 and is out of the window. Reasons without a hint here are
 * named bare (their names say it: `span_id_missing`, `temporality_unspecified`).
 */
export function otlpRejectionHints(limits: EventLimits): ReadonlyMap<string, string> {
  return new Map([
    [
      'ts_out_of_range',
      `record times (timeUnixNano, observedTimeUnixNano; a span's endTimeUnixNano) are nanoseconds since the Unix epoch, ${tsWindowText(limits)} (seconds are 10^9 times too small, milliseconds 10^6)`,
    ],
  ]);
}
