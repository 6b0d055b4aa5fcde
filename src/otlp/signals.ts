import type { MappedExport, MappingContext, OtlpSignal } from './mapped-export';
import { mapLogs } from './map-logs';
import { mapMetrics } from './map-metrics';
import { mapTraces } from './map-traces';
import type { OtlpTypes } from './proto/otlp-types';
import type protobuf from 'protobufjs';

/** What differs between the three export services. */
export interface SignalSpec {
  readonly signal: OtlpSignal;
  /** Route of the OTLP/HTTP specification. */
  readonly path: string;
  readonly request: (types: OtlpTypes) => protobuf.Type;
  readonly response: (types: OtlpTypes) => protobuf.Type;
  /** Field of the `partial_success` message that counts rejected records (lowerCamelCase). */
  readonly rejectedField: string;
  /** What a record is called in messages. */
  readonly recordNoun: string;
  readonly map: (request: unknown, ctx: MappingContext) => MappedExport;
}

/** A signal's spec: its route, messages (`<signal>Request`, `<signal>Response`) follow its name. */
function signalSpec(
  signal: OtlpSignal,
  rejectedField: string,
  recordNoun: string,
  map: SignalSpec['map'],
): SignalSpec {
  return {
    signal,
    path: `/v1/${signal}`,
    request: (t) => t[`${signal}Request`],
    response: (t) => t[`${signal}Response`],
    rejectedField,
    recordNoun,
    map,
  };
}

export const SIGNALS: readonly SignalSpec[] = [
  signalSpec('logs', 'rejectedLogRecords', 'log records', mapLogs),
  signalSpec('metrics', 'rejectedDataPoints', 'data points', mapMetrics),
  signalSpec('traces', 'rejectedSpans', 'spans', mapTraces),
];
