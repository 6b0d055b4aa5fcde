/**
 * An app instrumented with the real Sentry Node SDK (`@sentry/node`), sending to a Sluice
 * collector's Sentry endpoints (compiled by `npm run build` to
 * dist/test/support/processes/sentry-client.js). It runs in its own process: the SDK instruments
 * the process it is loaded in. One scenario per run, given as JSON in argv[2]:
 *
 *   {"scenario": "errors" | "throttle" | "tracing", "dsn": "http://<key>@127.0.0.1:<port>/<project>",
 *    "release": "…", "environment": "…", "rounds": n (throttle), "logsPerRound": n (throttle)}
 *
 * - `errors`: an exception (TypeError from `chargeCard`), an error message, an info message, two
 *   logs and a transaction, then a flush. Prints their event ids.
 * - `throttle`: `rounds` rounds of `logsPerRound` logs and one exception, each round flushed,
 *   then a last flush that sends the client report. Prints each response's status and
 *   `X-Sentry-Rate-Limits`, and the exceptions' event ids.
 * - `tracing`: two transactions (`checkout`, op `http.server`, ~50 ms long with a child span
 *   `charge card`; `search`, op `db`, ending in an error status, with `searchSpans` child spans), flushed; then the envelope of
 *   `checkout` is sent again through the SDK's transport (a resend). `traceLifecycle` picks the
 *   SDK's way of sending them. Prints each transaction and span as the SDK sent them, and the
 *   answers.
 *
 * It prints one line: `{"event":"done", …}`.
 */
import * as Sentry from '@sentry/node';

interface Scenario {
  readonly scenario: 'errors' | 'throttle' | 'tracing';
  readonly dsn: string;
  readonly release?: string;
  readonly environment?: string;
  readonly rounds?: number;
  readonly logsPerRound?: number;
  /** `tracing`: the SDK's option (its default, `stream`, sends `span` items; `static`, transactions). */
  readonly traceLifecycle?: 'static' | 'stream';
  /** `tracing`: child spans of `search` (`query <i>`). Default 0. */
  readonly searchSpans?: number;
}

/** A transaction or span as the SDK sent it (times in seconds). */
interface SentSpan {
  /** A transaction, or the segment span of streaming: the transaction itself. */
  readonly segment: boolean;
  readonly name: string;
  readonly eventId: string | null;
  readonly spanId: string;
  readonly traceId: string;
  readonly op: string | undefined;
  readonly status: string | undefined;
  readonly start: number;
  readonly end: number;
}

/** The transactions (and their spans) and streamed spans of an envelope's items. */
function spansOf(items: ReadonlyArray<readonly [{ type?: string }, any]>): SentSpan[] {
  const out: SentSpan[] = [];
  for (const [header, p] of items) {
    if (header.type === 'transaction') {
      const trace = p.contexts.trace;
      out.push({
        segment: true,
        name: p.transaction,
        eventId: p.event_id,
        spanId: trace.span_id,
        traceId: trace.trace_id,
        op: trace.op,
        status: trace.status,
        start: p.start_timestamp,
        end: p.timestamp,
      });
      for (const c of p.spans ?? []) {
        out.push({
          segment: false,
          name: c.description,
          eventId: null,
          spanId: c.span_id,
          traceId: c.trace_id,
          op: c.op,
          status: c.status,
          start: c.start_timestamp,
          end: c.timestamp,
        });
      }
    } else if (header.type === 'span') {
      for (const c of p.items ?? []) {
        out.push({
          segment: c.is_segment === true,
          name: c.name,
          eventId: null,
          spanId: c.span_id,
          traceId: c.trace_id,
          op: c.attributes?.['sentry.op']?.value,
          status: c.status,
          start: c.start_timestamp,
          end: c.end_timestamp,
        });
      }
    }
  }
  return out;
}

interface Answer {
  readonly status: number | undefined;
  readonly rateLimits: string | null;
  readonly retryAfter: string | null;
  /** Transactions and spans the envelope carried. */
  readonly spans: number;
}

function chargeCard(amount: number): never {
  throw new TypeError(`card declined for ${amount}`);
}

async function main(): Promise<void> {
  const s = JSON.parse(process.argv[2] ?? '{}') as Scenario;
  const answers: Answer[] = [];
  const sent: SentSpan[] = [];
  let checkoutEnvelope: Parameters<ReturnType<typeof Sentry.makeNodeTransport>['send']>[0] | null = null;
  Sentry.init({
    dsn: s.dsn,
    ...(s.traceLifecycle !== undefined && { traceLifecycle: s.traceLifecycle }),
    ...(s.release !== undefined && { release: s.release }),
    ...(s.environment !== undefined && { environment: s.environment }),
    tracesSampleRate: 1,
    // The answers, as the SDK's transport saw them.
    transport: (options) => {
      const inner = Sentry.makeNodeTransport(options);
      return {
        ...inner,
        send: async (envelope) => {
          const spans = spansOf(envelope[1] as ReadonlyArray<readonly [{ type?: string }, any]>);
          if (spans.some((t) => t.segment && t.name === 'checkout')) checkoutEnvelope = envelope;
          const res = await inner.send(envelope);
          if (res.statusCode !== undefined) {
            // Only what reached the collector: the SDK holds back what a rate limit names.
            sent.push(...spans);
            answers.push({
              status: res.statusCode,
              rateLimits: res.headers?.['x-sentry-rate-limits'] ?? null,
              retryAfter: res.headers?.['retry-after'] ?? null,
              spans: spans.length,
            });
          }
          return res;
        },
      };
    },
  });
  Sentry.setTag('route', '/checkout');

  if (s.scenario === 'errors') {
    let exceptionId = '';
    try {
      chargeCard(42);
    } catch (err) {
      exceptionId = Sentry.captureException(err);
    }
    const errorMessageId = Sentry.captureMessage('payment backend unreachable', 'error');
    const infoId = Sentry.captureMessage('cart updated', 'info');
    Sentry.logger.info('checkout started', { cart: 3 });
    Sentry.logger.warn('slow payment', { ms: 1200 });
    Sentry.startSpan({ name: 'checkout' }, () => undefined);
    await Sentry.flush(10_000);
    console.log(JSON.stringify({ event: 'done', exceptionId, errorMessageId, infoId, answers }));
    return;
  }

  if (s.scenario === 'tracing') {
    await Sentry.startSpan({ name: 'checkout', op: 'http.server' }, async () => {
      await Sentry.startSpan({ name: 'charge card', op: 'http.client' }, async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
      });
    });
    Sentry.startSpan({ name: 'search', op: 'db' }, (span) => {
      for (let i = 0; i < (s.searchSpans ?? 0); i++)
        Sentry.startSpan({ name: `query ${i}`, op: 'db.query' }, () => undefined);
      span.setStatus({ code: 2, message: 'internal_error' });
    });
    await Sentry.flush(10_000);
    const resendStatus =
      checkoutEnvelope === null
        ? null
        : (await Sentry.getClient()?.getTransport()?.send(checkoutEnvelope))?.statusCode;
    console.log(JSON.stringify({ event: 'done', spans: sent, resendStatus, answers }));
    return;
  }

  const exceptionIds: string[] = [];
  for (let round = 0; round < (s.rounds ?? 3); round++) {
    for (let i = 0; i < (s.logsPerRound ?? 100); i++) Sentry.logger.info('item added', { round, i });
    try {
      chargeCard(round);
    } catch (err) {
      exceptionIds.push(Sentry.captureException(err));
    }
    await Sentry.flush(10_000);
  }
  await Sentry.flush(10_000);
  console.log(JSON.stringify({ event: 'done', exceptionIds, answers }));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
