import type { RequestListener } from 'node:http';
import { ERROR_CATALOGUE } from '../../errors/catalogue';
import type { IngestService } from '../../ingest/ingest-service';
import type { OtlpMetrics } from '../../metrics/otlp-instruments';
import { statusAnswer, RPC_CODES } from '../../otlp/answer';
import { encodingOf } from '../../otlp/encoding';
import { otlpTypes } from '../../otlp/proto/otlp-types';

/**
 * The receiver's first decision about a request, as `withOverloadGate` takes it for
 * `POST /v1/events`: while the intake says the process is saturated (`refuseUnread`), every
 * OTLP `POST` is answered 429 with a `google.rpc.Status` (RESOURCE_EXHAUSTED) and `Retry-After`,
 * from its headers alone; its body is never read. The exporter resends the whole export.
 */
export function withOtlpOverloadGate(
  listener: RequestListener,
  ingest: Pick<IngestService, 'refuseUnread'>,
  metrics: OtlpMetrics,
): RequestListener {
  const types = otlpTypes();
  const message = ERROR_CATALOGUE.overloaded.message.replace('all of its events', 'the export');
  const answers = {
    json: statusAnswer(types, 'json', RPC_CODES.RESOURCE_EXHAUSTED, message),
    protobuf: statusAnswer(types, 'protobuf', RPC_CODES.RESOURCE_EXHAUSTED, message),
  };
  return (req, res) => {
    if (req.method === 'POST') {
      const refused = ingest.refuseUnread();
      if (refused !== null) {
        const encoding = encodingOf(req.headers['content-type']) ?? 'json';
        const answer = answers[encoding];
        res.writeHead(429, {
          'Content-Type': answer.contentType,
          'Content-Length': answer.body.length,
          'Retry-After': String(refused.retryAfterSeconds),
        });
        res.end(answer.body);
        metrics.requests.inc({ signal: 'unread', encoding, status: '429' });
        return;
      }
    }
    listener(req, res);
  };
}
