import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { otlpTypes } from '../../src/otlp/proto/otlp-types';
import type { Encoding } from './otlp-support';

export type Signal = 'logs' | 'metrics' | 'traces';

const REQUEST_TYPES = { logs: 'logsRequest', metrics: 'metricsRequest', traces: 'tracesRequest' } as const;
const RESPONSE_TYPES = {
  logs: 'logsResponse',
  metrics: 'metricsResponse',
  traces: 'tracesResponse',
} as const;

export interface OtlpAnswer {
  readonly status: number;
  readonly headers: Headers;
  /** The decoded body: an `Export…ServiceResponse` on 200, a `google.rpc.Status` otherwise (JSON shape). */
  readonly body: any;
}

/**
 * POSTs an export request written in the OTLP/JSON shape (hex ids, int64 as strings): as JSON
 * text, or converted to protobuf (ids to bytes) when `encoding` is protobuf. The answer is decoded
 * by its Content-Type.
 */
export async function postOtlp(
  otlpUrl: string,
  signal: Signal,
  request: unknown,
  opts: { encoding?: Encoding; gzip?: boolean; headers?: Record<string, string>; raw?: Buffer | string } = {},
): Promise<OtlpAnswer> {
  const encoding = opts.encoding ?? 'json';
  let body: Buffer =
    opts.raw !== undefined
      ? Buffer.from(opts.raw)
      : encoding === 'json'
        ? Buffer.from(JSON.stringify(request))
        : toProtobuf(signal, request);
  if (opts.gzip) body = gzipSync(body);
  const headers: Record<string, string> = {
    'content-type': encoding === 'json' ? 'application/json' : 'application/x-protobuf',
    ...(opts.gzip && { 'content-encoding': 'gzip' }),
    ...opts.headers,
  };
  const res = await fetch(`${otlpUrl}/v1/${signal}`, {
    method: 'POST',
    headers,
    body: body as unknown as BodyInit,
  });
  return {
    status: res.status,
    headers: res.headers,
    body: decodeAnswer(signal, res.status, res.headers, Buffer.from(await res.arrayBuffer())),
  };
}

function decodeAnswer(signal: Signal, status: number, headers: Headers, body: Buffer): any {
  const type = headers.get('content-type') ?? '';
  if (type.startsWith('application/json')) return JSON.parse(body.toString('utf8'));
  if (type !== 'application/x-protobuf') throw new Error(`answer of type "${type}"`);
  const t = status === 200 ? otlpTypes()[RESPONSE_TYPES[signal]] : otlpTypes().status;
  return t.toObject(t.decode(body), { longs: String });
}

/** OTLP/JSON → protobuf bytes: hex ids become bytes, the rest converts as protobufjs reads it. */
export function toProtobuf(signal: Signal, request: unknown): Buffer {
  const type = otlpTypes()[REQUEST_TYPES[signal]];
  const withBytes = JSON.parse(JSON.stringify(request), (key, value) =>
    (key === 'traceId' || key === 'spanId') && typeof value === 'string' ? Buffer.from(value, 'hex') : value,
  );
  return Buffer.from(type.encode(type.fromObject(withBytes)).finish());
}

export function nowNanos(offsetMs = 0): string {
  return String(BigInt(Date.now() + offsetMs) * 1_000_000n);
}

export function resourceOf(app: string | null): unknown {
  return { attributes: app === null ? [] : [{ key: 'service.name', value: { stringValue: app } }] };
}

/** An ExportLogsServiceRequest of `records` (OTLP/JSON log records) from `app`. */
export function logsRequest(app: string | null, records: unknown[]): unknown {
  return {
    resourceLogs: [
      { resource: resourceOf(app), scopeLogs: [{ scope: { name: 'contract' }, logRecords: records }] },
    ],
  };
}

export function logRecord(seq: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    timeUnixNano: nowNanos(),
    severityNumber: 9,
    body: { stringValue: `line ${seq}` },
    attributes: [{ key: 'seq', value: { intValue: String(seq) } }],
    ...extra,
  };
}

export function gaugeRequest(app: string, points: unknown[]): unknown {
  return {
    resourceMetrics: [
      {
        resource: resourceOf(app),
        scopeMetrics: [{ metrics: [{ name: 'queue.depth', gauge: { dataPoints: points } }] }],
      },
    ],
  };
}

export function hexId(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** An ExportTraceServiceRequest of `spans` (OTLP/JSON) from `app`. */
export function tracesRequest(app: string, spans: unknown[]): unknown {
  return { resourceSpans: [{ resource: resourceOf(app), scopeSpans: [{ spans }] }] };
}

export function errorSpan(seq: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    traceId: hexId(16),
    spanId: hexId(8),
    name: `charge ${seq}`,
    kind: 2,
    startTimeUnixNano: nowNanos(-5),
    endTimeUnixNano: nowNanos(),
    attributes: [{ key: 'seq', value: { intValue: String(seq) } }],
    status: { code: 2, message: 'declined' },
    ...extra,
  };
}
