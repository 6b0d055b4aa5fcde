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

export const SIGNALS: readonly SignalSpec[] = [
  {
    signal: 'logs',
    path: '/v1/logs',
    request: (t) => t.logsRequest,
    response: (t) => t.logsResponse,
    rejectedField: 'rejectedLogRecords',
    recordNoun: 'log records',
    map: mapLogs,
  },
  {
    signal: 'metrics',
    path: '/v1/metrics',
    request: (t) => t.metricsRequest,
    response: (t) => t.metricsResponse,
    rejectedField: 'rejectedDataPoints',
    recordNoun: 'data points',
    map: mapMetrics,
  },
  {
    signal: 'traces',
    path: '/v1/traces',
    request: (t) => t.tracesRequest,
    response: (t) => t.tracesResponse,
    rejectedField: 'rejectedSpans',
    recordNoun: 'spans',
    map: mapTraces,
  },
];
