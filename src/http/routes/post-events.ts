import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import type { Principal } from '../../auth/api-keys';
import { ERROR_CATALOGUE, SluiceError } from '../../errors/catalogue';
import type { IntakeService, ReportReading } from '../../intake/intake-service';
import type { AppAdvice, IntakeAnswer } from '../../intake/intake-answer';
import type { Metrics } from '../../metrics/instruments';
import { SCANNED_BODY_SHAPE } from '../../events/scan/scan-request';
import { wireShapeBudget } from '../../events/wire-shape';
import { repeatedTopLevelMember, scanJson, type JsonShapeLimits, type JsonShapeVerdict } from '../json-scan';
import { isJsonContentType, readBody } from '../read-body';
import { sendAnswer, type JsonAnswer } from '../send-json';
import type { TurnOrder } from '../../intake/turn-order';

export interface PostEventsOptions {
  readonly ingest: Pick<IntakeService, 'ingest' | 'ingestBody'>;
  /** Largest body after decompression (bytes). */
  readonly maxBodyBytes: number;
  /** Deepest array/object nesting accepted. */
  readonly maxJsonDepth: number;
  /** Most events in one request; with `maxAttributes`, bounds the JSON values a body may hold. */
  readonly maxEventsPerRequest: number;
  /** Most attributes per event. */
  readonly maxAttributes: number;
  /** Turns for the CPU-heavy part (parse, validate, admit); see turn-order.ts. */
  readonly turns: Pick<TurnOrder, 'wait'>;
  /** Counts requests refused as a whole, by error code. */
  readonly metrics: Pick<Metrics, 'requestsRejected'>;
  /**
   * Takes the body's client report (its `report` member; `undefined` when absent) for the loss map
   * and the sampling advice: says where the request's events come from and what its sender
   * captured (docs/http-api.md, "Client reports"). Absent: reports are ignored.
   */
  readonly readReport?: (raw: unknown, principal: Principal | null) => ReportReading;
}

/** Answers one `POST /v1/events` request; throws a `SluiceError` (or a read error) to refuse it whole. */
export type EventsHandler = (req: IncomingMessage, principal: Principal | null) => Promise<JsonAnswer>;

/**
 * `POST /v1/events`: parse, hand the events to the ingest service, map its outcome
 * (docs/ARCHITECTURE.md answers table). Free of Express: the app and the `/v1/events` listener
 * both call it.
 */
export function eventsHandler(o: PostEventsOptions): EventsHandler {
  const shape: JsonShapeLimits = {
    maxDepth: o.maxJsonDepth,
    ...wireShapeBudget({ maxAttributes: o.maxAttributes }, o.maxEventsPerRequest),
  };
  const checkCanWaitUpTo = shapeCheckCanWaitUpTo(shape, o.maxEventsPerRequest);
  return async (req, principal) => {
    let outcome: IntakeAnswer;
    try {
      const body = await readChecked(req, o);
      const checkShape = shapeCheckOf(body, shape, o.maxEventsPerRequest);
      if (body.length > checkCanWaitUpTo) checkShape();
      // The single pass first; a body of another shape is parsed and validated as before.
      const readReport = (raw: unknown): ReportReading => o.readReport?.(raw, principal) ?? {};
      outcome =
        (await o.ingest.ingestBody(body, principal, () => o.turns.wait(), checkShape, readReport)) ??
        (await ingestParsed(o, body, principal, checkShape, readReport));
    } catch (err) {
      if (err instanceof SluiceError) o.metrics.requestsRejected.inc({ code: err.code });
      throw err;
    }
    switch (outcome.kind) {
      case 'admitted':
        if (outcome.accepted === 0 && outcome.rejected.length > 0) {
          // Every event was invalid: not a success (curl -f and proxies see it), and a client must
          // not resend it (a 4xx, never retried by the SDK; it drops the events as rejected).
          o.metrics.requestsRejected.inc({ code: 'events_rejected' });
          return {
            status: ERROR_CATALOGUE.events_rejected.status,
            body: JSON.stringify({
              accepted: 0,
              rejected: outcome.rejected,
              error: 'events_rejected',
              message: ERROR_CATALOGUE.events_rejected.message,
            }),
          };
        }
        return {
          status: 202,
          body: JSON.stringify({
            accepted: outcome.accepted,
            rejected: outcome.rejected,
            ...adviceMembers(outcome.advice),
          }),
          ...adviceHeader(outcome.advice),
        };
      case 'throttled':
        return {
          status: 429,
          retryAfterSeconds: outcome.retryAfterSeconds,
          body: JSON.stringify({
            accepted: outcome.accepted,
            rejected: outcome.rejected,
            throttled: outcome.throttled,
            error: outcome.reason,
            ...adviceMembers(outcome.advice),
          }),
          ...adviceHeader(outcome.advice),
        };
      case 'unavailable':
        throw new SluiceError('storage_unavailable', undefined, outcome.retryAfterSeconds);
    }
  };
}

/**
 * The answer's members for the sampling advice (docs/http-api.md, "Sampling advice"): `sample_rate`
 * for a request of one app, `sample_rates` by app for a request of several.
 */
function adviceMembers(
  advice: readonly AppAdvice[],
): { sample_rate: number } | { sample_rates: Record<string, number> } | null {
  if (advice.length === 0) return null;
  if (advice.length === 1) return { sample_rate: (advice[0] as AppAdvice).sampleRate };
  return { sample_rates: Object.fromEntries(advice.map((a) => [a.app, a.sampleRate])) };
}

/** `X-Sluice-Sample-Rate` for a request of one app. */
function adviceHeader(advice: readonly AppAdvice[]): { sampleRate: number } | null {
  return advice.length === 1 ? { sampleRate: (advice[0] as AppAdvice).sampleRate } : null;
}

/** The Express route for `eventsHandler`. */
export function postEvents(handle: EventsHandler) {
  return async (req: Request, res: Response): Promise<void> => {
    sendAnswer(res, await handle(req, req.context.principal));
  };
}

/**
 * The body, once it had its turn. What a hostile body could make expensive to decode is refused on
 * the raw bytes first: bytes that are not UTF-8 (decoding would turn them into U+FFFD without a
 * word). Its shape is checked by `shapeCheckOf` before anything parses it.
 */
async function readChecked(req: IncomingMessage, o: PostEventsOptions): Promise<Buffer> {
  if (!isJsonContentType(req.headers['content-type'])) {
    throw new SluiceError('unsupported_media_type');
  }
  const body = await readBody(req, o.maxBodyBytes);
  await o.turns.wait();
  if (!isUtf8(body)) throw new SluiceError('invalid_utf8');
  return body;
}

/**
 * The body's shape check, run once however often it is called: nesting and a number of values no
 * request of the contract needs are refused on the raw bytes (parsing them is what costs), before
 * `JSON.parse` or the single pass skips a nested value (`RequestScan.open`).
 */
function shapeCheckOf(body: Buffer, shape: JsonShapeLimits, maxEvents: number): () => void {
  let verdict: JsonShapeVerdict | null = null;
  return () => {
    verdict ??= scanJson(body, shape);
    if (verdict === 'too_deep') {
      throw new SluiceError('too_deep', `Body nests deeper than ${shape.maxDepth} levels.`);
    }
    if (verdict === 'too_many_values') {
      throw new SluiceError(
        'too_many_values',
        `Body holds more arrays/objects (${shape.maxContainers}) or members (${shape.maxSeparators} separators) than ${maxEvents} events can.`,
      );
    }
  };
}

/**
 * The longest body (bytes) whose shape check can be left to the single pass, which asks for it
 * before it skips a nested value or parses anything; -1 when none can. A body the pass reads through
 * without asking holds only the contract's objects (`SCANNED_BODY_SHAPE`, at most `maxEvents`
 * events), within `shape` here; what bounds its separators is its length: valid JSON has at most
 * one per two bytes.
 */
function shapeCheckCanWaitUpTo(shape: JsonShapeLimits, maxEvents: number): number {
  const { depth, containersPerEvent, envelopeContainers } = SCANNED_BODY_SHAPE;
  const fits =
    shape.maxDepth >= depth && shape.maxContainers >= containersPerEvent * maxEvents + envelopeContainers;
  return fits ? 2 * shape.maxSeparators : -1;
}

/**
 * The body's `events` array and `report` member, parsed whole (the typed path). A body that gives a
 * member twice is refused: `JSON.parse` would keep the last and drop the events of the others
 * without counting them. (The single pass reads only `{"events": [...], "report": …}` with each
 * member once, and hands every other body here.)
 */
function parseEvents(body: Buffer): { events: unknown[]; report: unknown } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new SluiceError('invalid_json');
  }
  const repeated = repeatedTopLevelMember(body);
  if (repeated !== null) {
    const name = JSON.stringify(repeated.slice(0, 64));
    throw new SluiceError(
      'invalid_body',
      `Body gives the member ${name} more than once; send {"events": [...]} (and "report") once each.`,
    );
  }
  const { events, report } = (parsed ?? {}) as { events?: unknown; report?: unknown };
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Array.isArray(events)) {
    throw new SluiceError('invalid_body');
  }
  return { events, report };
}

/** The typed path: the body parsed whole, its report admitted, its events validated one by one. */
function ingestParsed(
  o: PostEventsOptions,
  body: Buffer,
  principal: Principal | null,
  checkShape: () => void,
  readReport: (raw: unknown) => ReportReading,
): Promise<IntakeAnswer> {
  checkShape();
  const { events, report } = parseEvents(body);
  return o.ingest.ingest(events, principal, readReport(report));
}
