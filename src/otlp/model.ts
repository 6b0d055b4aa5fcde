/**
 * The shape of a decoded export request, common to both encodings. Protobuf messages (protobufjs)
 * and OTLP/JSON objects use the same lowerCamelCase field names; they differ only in how scalars
 * arrive, so every scalar is typed `unknown` and read through `scalars.ts`:
 * - 64-bit integers: a protobufjs `Long` or number (protobuf), a decimal string or number (JSON);
 * - trace and span ids: bytes (protobuf), hex strings (JSON); other bytes: base64 strings in JSON;
 * - a field not sent: absent (JSON) or the type's default on the message prototype (protobuf).
 * Anything may be missing or of another type in a hostile body: readers check before use.
 */
export interface OtlpAnyValue {
  readonly stringValue?: unknown;
  readonly boolValue?: unknown;
  readonly intValue?: unknown;
  readonly doubleValue?: unknown;
  readonly arrayValue?: { readonly values?: unknown } | null;
  readonly kvlistValue?: { readonly values?: unknown } | null;
  readonly bytesValue?: unknown;
}

export interface OtlpKeyValue {
  readonly key?: unknown;
  readonly value?: OtlpAnyValue | null;
}

export interface OtlpResource {
  readonly attributes?: unknown;
}

export interface OtlpScope {
  readonly name?: unknown;
  readonly version?: unknown;
}

export interface OtlpLogRecord {
  readonly timeUnixNano?: unknown;
  readonly observedTimeUnixNano?: unknown;
  readonly severityNumber?: unknown;
  readonly severityText?: unknown;
  readonly body?: OtlpAnyValue | null;
  readonly attributes?: unknown;
  readonly traceId?: unknown;
  readonly spanId?: unknown;
  readonly eventName?: unknown;
}

export interface OtlpNumberDataPoint {
  readonly attributes?: unknown;
  readonly startTimeUnixNano?: unknown;
  readonly timeUnixNano?: unknown;
  readonly asDouble?: unknown;
  readonly asInt?: unknown;
}

export interface OtlpHistogramDataPoint {
  readonly attributes?: unknown;
  readonly startTimeUnixNano?: unknown;
  readonly timeUnixNano?: unknown;
  readonly count?: unknown;
  readonly sum?: unknown;
  readonly bucketCounts?: unknown;
  readonly explicitBounds?: unknown;
  readonly min?: unknown;
  readonly max?: unknown;
}

export interface OtlpExponentialHistogramDataPoint {
  readonly attributes?: unknown;
  readonly startTimeUnixNano?: unknown;
  readonly timeUnixNano?: unknown;
  readonly count?: unknown;
  readonly sum?: unknown;
  readonly min?: unknown;
  readonly max?: unknown;
}

export interface OtlpSummaryDataPoint {
  readonly attributes?: unknown;
  readonly startTimeUnixNano?: unknown;
  readonly timeUnixNano?: unknown;
  readonly count?: unknown;
  readonly sum?: unknown;
  readonly quantileValues?: unknown;
}

export interface OtlpMetric {
  readonly name?: unknown;
  readonly unit?: unknown;
  readonly gauge?: { readonly dataPoints?: unknown } | null;
  readonly sum?: {
    readonly dataPoints?: unknown;
    readonly aggregationTemporality?: unknown;
    readonly isMonotonic?: unknown;
  } | null;
  readonly histogram?: { readonly dataPoints?: unknown; readonly aggregationTemporality?: unknown } | null;
  readonly exponentialHistogram?: {
    readonly dataPoints?: unknown;
    readonly aggregationTemporality?: unknown;
  } | null;
  readonly summary?: { readonly dataPoints?: unknown } | null;
}

export interface OtlpSpanEvent {
  readonly timeUnixNano?: unknown;
  readonly name?: unknown;
  readonly attributes?: unknown;
}

export interface OtlpSpan {
  readonly traceId?: unknown;
  readonly spanId?: unknown;
  readonly name?: unknown;
  readonly kind?: unknown;
  readonly startTimeUnixNano?: unknown;
  readonly endTimeUnixNano?: unknown;
  readonly attributes?: unknown;
  readonly events?: unknown;
  readonly status?: { readonly message?: unknown; readonly code?: unknown } | null;
}

/** `SeverityNumber` from which a log record is an error (SEVERITY_NUMBER_ERROR). */
export const SEVERITY_ERROR = 17;
/** `AggregationTemporality`. */
export const TEMPORALITY_DELTA = 1;
export const TEMPORALITY_CUMULATIVE = 2;
/** `Status.StatusCode` of a failed span. */
export const STATUS_CODE_ERROR = 2;
