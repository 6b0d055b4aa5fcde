import type { RequestListener } from 'node:http';
import { ERROR_CATALOGUE } from '../../errors/catalogue';
import type { ShedRule } from '../../intake/shed-rule';
import type { OtlpMetrics } from '../../metrics/otlp-instruments';
import { statusAnswer, RPC_CODES } from '../../otlp/answer';
import { encodingOf } from '../../otlp/encoding';
import { otlpTypes } from '../../otlp/proto/otlp-types';
import { withOverloadGate } from '../overload-gate';

/**
 * The receiver's first decision about a request: the same gate and shed rule as `POST /v1/events`
 * (`withOverloadGate`, `ShedRule`), answering in OTLP's terms. While the process is saturated,
 * every OTLP `POST` is answered 429 with a `google.rpc.Status` (RESOURCE_EXHAUSTED) in the
 * request's encoding and `Retry-After`, from its headers alone; its body is never read. The
 * exporter resends the whole export.
 */
export function withOtlpOverloadGate(
  listener: RequestListener,
  shed: Pick<ShedRule, 'refuseUnread' | 'hold'>,
  metrics: OtlpMetrics,
): RequestListener {
  const types = otlpTypes();
  const message = ERROR_CATALOGUE.overloaded.message.replace('all of its events', 'the export');
  const answers = {
    json: statusAnswer(types, 'json', RPC_CODES.RESOURCE_EXHAUSTED, message),
    protobuf: statusAnswer(types, 'protobuf', RPC_CODES.RESOURCE_EXHAUSTED, message),
  };
  return withOverloadGate(
    listener,
    shed,
    (req) => req.method === 'POST',
    (req, res, retryAfterSeconds) => {
      const encoding = encodingOf(req.headers['content-type']) ?? 'json';
      const answer = answers[encoding];
      res.writeHead(429, {
        'Content-Type': answer.contentType,
        'Content-Length': answer.body.length,
        'Retry-After': String(retryAfterSeconds),
      });
      res.end(answer.body);
      metrics.requests.inc({ signal: 'unread', encoding, status: '429' });
    },
  );
}
