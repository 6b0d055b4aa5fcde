import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { ApiKeyRing } from '../../auth/api-keys';
import { ERROR_CATALOGUE, SluiceError, type ErrorCode } from '../../errors/catalogue';
import type { Logger } from '../../log/logger';
import type { IntakeMetrics } from '../../metrics/intake-instruments';
import type { Metrics } from '../../metrics/instruments';
import type { OtlpMetrics } from '../../metrics/otlp-instruments';
import { exportResponse, rpcCodeFor, statusAnswer, type EncodedAnswer } from '../../otlp/answer';
import { encodingOf, type OtlpEncoding } from '../../otlp/encoding';
import type { OtlpExportService } from '../../otlp/export-service';
import { otlpTypes } from '../../otlp/proto/otlp-types';
import { SIGNALS, type SignalSpec } from '../../otlp/signals';
import { readBody } from '../read-body';
import type { RefusalEpisodes } from '../refusal-episodes';
import type { TurnOrder } from '../../intake/turn-order';
import { decodeExport } from './decode-export';
import { requestIdOf } from '../request-context';
import { otlpPrincipal } from './otlp-principal';

export interface OtlpListenerDeps {
  readonly exports: Pick<OtlpExportService, 'export'>;
  /** API keys; null: auth off. */
  readonly keyRing: ApiKeyRing | null;
  readonly intakeMetrics: IntakeMetrics;
  readonly metrics: Pick<Metrics, 'httpDuration'>;
  readonly otlpMetrics: OtlpMetrics;
  /** Largest body after decompression (bytes; `SLUICE_OTLP_MAX_BODY_BYTES`). */
  readonly maxBodyBytes: number;
  /** Deepest JSON nesting accepted (`SLUICE_OTLP_MAX_JSON_DEPTH`). */
  readonly maxJsonDepth: number;
  /** Turns for the CPU-heavy part (decode, map, admit), shared with `POST /v1/events`. */
  readonly turns: Pick<TurnOrder, 'wait'>;
  /** True once shutdown began: answers then close their connection. */
  readonly draining: () => boolean;
  /** Where 503 refusals are logged, once per episode and route (shared with the main port). */
  readonly refusals: RefusalEpisodes;
  readonly logger: Logger;
}

/**
 * The OTLP/HTTP receiver's requests (OTLP specification, "OTLP/HTTP"): `POST /v1/logs`,
 * `/v1/metrics`, `/v1/traces`, in JSON or protobuf by Content-Type, answered in the request's
 * encoding (JSON for a Content-Type it does not know). Thin: authenticate, read, decode, hand the
 * export to the export service, encode its outcome. Refusals carry a `google.rpc.Status`.
 */
export function createOtlpListener(deps: OtlpListenerDeps): RequestListener {
  const types = otlpTypes();
  const byPath = new Map(SIGNALS.map((s) => [s.path, s]));

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    spec: SignalSpec | undefined,
    encoding: OtlpEncoding | null,
  ): Promise<{ status: number; code: ErrorCode | null }> {
    const answerIn = encoding ?? 'json';
    try {
      if (spec === undefined) {
        if (!byPath.has(pathOf(req))) {
          throw new SluiceError('not_found', `No OTLP route for ${req.method} ${pathOf(req)}.`);
        }
        res.setHeader('Allow', 'POST');
        throw new SluiceError('method_not_allowed', `${pathOf(req)} answers POST, not ${req.method}.`);
      }
      if (encoding === null) {
        throw new SluiceError(
          'unsupported_media_type',
          'Content-Type must be application/json or application/x-protobuf.',
        );
      }
      const principal = otlpPrincipal(req, deps.keyRing, deps.intakeMetrics);
      const body = await readBody(req, deps.maxBodyBytes);
      await deps.turns.wait();
      const request = decodeExport(body, encoding, spec, types, deps.maxJsonDepth);
      const outcome = await deps.exports.export(spec, request, principal);
      if (outcome.kind === 'admitted') {
        const answer = exportResponse(spec, types, encoding, outcome.rejected, outcome.message);
        return { status: send(res, 200, answer), code: null };
      }
      res.setHeader('Retry-After', String(outcome.retryAfterSeconds));
      const message = ERROR_CATALOGUE[outcome.reason].message.replace('the throttled events', 'the export');
      const answer = statusAnswer(types, encoding, rpcCodeFor(outcome.status), message);
      return { status: send(res, outcome.status, answer), code: outcome.reason };
    } catch (err) {
      const e = err instanceof SluiceError ? err : clientError(err);
      if (e === null) {
        deps.logger.error({ err, path: pathOf(req) }, 'unhandled error in OTLP request');
        const answer = statusAnswer(types, answerIn, rpcCodeFor(500), ERROR_CATALOGUE.internal.message);
        return { status: send(res, 500, answer), code: 'internal' };
      }
      if (e.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(e.retryAfterSeconds));
      // The rest of an over-long body is not read: the connection cannot be reused.
      if (e.status === 413) res.setHeader('Connection', 'close');
      const answer = statusAnswer(types, answerIn, rpcCodeFor(e.status), e.message);
      return { status: send(res, e.status, answer), code: e.code };
    }
  }

  return (req, res) => {
    const started = performance.now();
    const path = pathOf(req);
    const spec = req.method === 'POST' ? byPath.get(path) : undefined;
    const encoding = encodingOf(req.headers['content-type']);
    res.setHeader('X-Request-Id', requestIdOf(req.headers['x-request-id']));
    if (deps.draining()) res.setHeader('Connection', 'close');
    void handle(req, res, spec, encoding).then(({ status, code }) => {
      const route = spec?.path ?? 'unmatched';
      const method = req.method ?? '';
      if (status === 503 && code !== null) deps.refusals.refused(method, route, code);
      else deps.refusals.served(method, route);
      deps.otlpMetrics.requests.inc({
        signal: spec?.signal ?? 'unmatched',
        encoding: encoding ?? 'unknown',
        status: String(status),
      });
      deps.metrics.httpDuration.observe(
        { route, method, status: String(status) },
        (performance.now() - started) / 1000,
      );
    });
  };
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

function send(res: ServerResponse, status: number, answer: EncodedAnswer): number {
  if (res.headersSent) {
    res.destroy();
    return status;
  }
  res.statusCode = status;
  res.setHeader('Content-Type', answer.contentType);
  res.setHeader('Content-Length', answer.body.length);
  res.end(answer.body);
  return status;
}

/** Errors raised by Node while reading a request (aborted, bad framing) are the client's problem. */
function clientError(err: unknown): SluiceError | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE') {
    return new SluiceError('invalid_body', 'Request body was cut off.');
  }
  return null;
}
