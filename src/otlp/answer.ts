import { CONTENT_TYPES, type OtlpEncoding } from './encoding';
import type { OtlpTypes } from './proto/otlp-types';
import type { SignalSpec } from './signals';

/** An encoded OTLP answer body and its Content-Type. */
export interface EncodedAnswer {
  readonly contentType: string;
  readonly body: Buffer;
}

/** `google.rpc.Code` values the receiver answers with. */
export const RPC_CODES = {
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** The `google.rpc.Code` for an HTTP status of a refused request. */
export function rpcCodeFor(status: number): number {
  if (status === 401) return RPC_CODES.UNAUTHENTICATED;
  if (status === 404) return RPC_CODES.NOT_FOUND;
  if (status === 405) return RPC_CODES.UNIMPLEMENTED;
  if (status === 413 || status === 429) return RPC_CODES.RESOURCE_EXHAUSTED;
  if (status === 503) return RPC_CODES.UNAVAILABLE;
  if (status >= 500) return RPC_CODES.INTERNAL;
  return RPC_CODES.INVALID_ARGUMENT;
}

/**
 * `Export…ServiceResponse`: empty on full success (the specification asks receivers to leave
 * `partial_success` unset then); otherwise `partial_success` with the rejected count and message.
 * JSON follows the proto3 mapping: int64 as a decimal string.
 */
export function exportResponse(
  spec: SignalSpec,
  types: OtlpTypes,
  encoding: OtlpEncoding,
  rejected: number,
  errorMessage: string,
): EncodedAnswer {
  const message =
    rejected > 0 || errorMessage !== ''
      ? { partialSuccess: { [spec.rejectedField]: rejected, errorMessage } }
      : {};
  if (encoding === 'json') {
    const json =
      'partialSuccess' in message
        ? { partialSuccess: { [spec.rejectedField]: String(rejected), errorMessage } }
        : {};
    return { contentType: CONTENT_TYPES.json, body: Buffer.from(JSON.stringify(json)) };
  }
  const type = spec.response(types);
  return {
    contentType: CONTENT_TYPES.protobuf,
    body: Buffer.from(type.encode(type.fromObject(message)).finish()),
  };
}

/** A `google.rpc.Status` (code and message, no details): the body of every refusal. */
export function statusAnswer(
  types: OtlpTypes,
  encoding: OtlpEncoding,
  code: number,
  message: string,
): EncodedAnswer {
  if (encoding === 'json') {
    return { contentType: CONTENT_TYPES.json, body: Buffer.from(JSON.stringify({ code, message })) };
  }
  const body = types.status.encode(types.status.fromObject({ code, message })).finish();
  return { contentType: CONTENT_TYPES.protobuf, body: Buffer.from(body) };
}
