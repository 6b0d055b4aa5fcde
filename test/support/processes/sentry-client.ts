/**
 * An app instrumented with the real Sentry Node SDK (`@sentry/node`), sending to a Sluice
 * collector's Sentry endpoints (compiled by `npm run build` to
 * dist/test/support/processes/sentry-client.js). It runs in its own process: the SDK instruments
 * the process it is loaded in. One scenario per run, given as JSON in argv[2]:
 *
 *   {"scenario": "errors" | "throttle", "dsn": "http://<key>@127.0.0.1:<port>/<project>",
 *    "release": "…", "environment": "…", "rounds": n (throttle), "logsPerRound": n (throttle)}
 *
 * - `errors`: an exception (TypeError from `chargeCard`), an error message, an info message, two
 *   logs and a transaction, then a flush. Prints their event ids.
 * - `throttle`: `rounds` rounds of `logsPerRound` logs and one exception, each round flushed,
 *   then a last flush that sends the client report. Prints each response's status and
 *   `X-Sentry-Rate-Limits`, and the exceptions' event ids.
 *
 * It prints one line: `{"event":"done", …}`.
 */
import * as Sentry from '@sentry/node';

interface Scenario {
  readonly scenario: 'errors' | 'throttle';
  readonly dsn: string;
  readonly release?: string;
  readonly environment?: string;
  readonly rounds?: number;
  readonly logsPerRound?: number;
}

interface Answer {
  readonly status: number | undefined;
  readonly rateLimits: string | null;
  readonly retryAfter: string | null;
}

function chargeCard(amount: number): never {
  throw new TypeError(`card declined for ${amount}`);
}

async function main(): Promise<void> {
  const s = JSON.parse(process.argv[2] ?? '{}') as Scenario;
  const answers: Answer[] = [];
  Sentry.init({
    dsn: s.dsn,
    ...(s.release !== undefined && { release: s.release }),
    ...(s.environment !== undefined && { environment: s.environment }),
    tracesSampleRate: 1,
    // The answers, as the SDK's transport saw them.
    transport: (options) => {
      const inner = Sentry.makeNodeTransport(options);
      return {
        ...inner,
        send: async (envelope) => {
          const res = await inner.send(envelope);
          if (res.statusCode !== undefined) {
            answers.push({
              status: res.statusCode,
              rateLimits: res.headers?.['x-sentry-rate-limits'] ?? null,
              retryAfter: res.headers?.['retry-after'] ?? null,
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
