import { waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { settledLossMap } from '../support/loss-map';
import { tempSqlitePath } from '../support/postgres';
import { storedEvents } from './otlp-support';
import { dsnOf, runNodeSentry, uuidOf } from './sentry-support';

/**
 * An app over its limit, as @sentry/node sees it: the collector's defaults but a limit of 10
 * events/s (a burst of 100), and an app sending 4 rounds of 150 logs and one exception. The log
 * envelope over the limit is refused with 429, `Retry-After` and `X-Sentry-Rate-Limits` naming the
 * log categories and never `error`; the SDK then drops its logs for that long (and says so in its
 * client report), while every exception still arrives. The loss map accounts for every event.
 *
 * The collector runs in the test's process, so the shed rule is off here (`SLUICE_SHED_LAG_MS=0`):
 * at its default of 10 ms of queueing, the test's own work on a loaded box made it answer 429
 * `overloaded` (Retry-After only, which the SDK honours for every category) before the rate limit
 * did, in two of three clean-clone runs (once with the file running alone). Shedding on the Sentry
 * paths is tested apart.
 */
describe('Sentry SDK over its rate limit', () => {
  let c: InProcessCollector;
  let sqlite: string;

  beforeAll(async () => {
    sqlite = tempSqlitePath('sentry-throttle');
    c = await startInProcess(
      { SLUICE_SQLITE_PATH: sqlite, SLUICE_RATE_LIMIT: '10', SLUICE_SHED_LAG_MS: '0' },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
  });

  it('is told to hold back its logs, stops sending them for Retry-After, and its errors still arrive', async () => {
    const project = 4242;
    const app = `sentry-${project}`;
    const rounds = 4;
    const logsPerRound = 150;
    const run = await runNodeSentry({
      scenario: 'throttle',
      dsn: dsnOf(c.url, 'pk', project),
      rounds,
      logsPerRound,
    });

    const refusals = (
      run.answers as Array<{ status: number; rateLimits: string | null; retryAfter: string | null }>
    ).filter((a) => a.status === 429);
    expect(refusals.length).toBeGreaterThan(0);
    for (const r of refusals) {
      expect(r.rateLimits).toMatch(/^\d+:default;log_item;transaction;span:key:rate_limited$/);
      expect(r.rateLimits?.split(':')[0]).toBe(r.retryAfter);
    }

    const events = await waitFor('the 4 exceptions', async () => {
      const e = await storedEvents(c.url, app, '&type=error');
      return e.length >= rounds ? e : null;
    });
    expect(events.map((e) => e.id).sort()).toEqual((run.exceptionIds as string[]).map(uuidOf).sort());

    // The counts are written once a second, the client report's with them: the map settles on all.
    const m = await waitFor('the loss map to hold every event the app made', async () => {
      const settled = await settledLossMap(c.url, app, { kind: 'sqlite', path: sqlite });
      return settled.generated === rounds * (logsPerRound + 1) ? settled : null;
    });
    // Every log and exception the app made: those stored, those refused at the collector, and
    // those its SDK dropped while told to back off (its client report).
    expect(m.generated).toBe(rounds * (logsPerRound + 1));
    expect(m.stored + m.lost).toBe(m.generated);
    expect(m.losses.collector?.rate_limited).toBeGreaterThan(0);
    expect(m.losses.sdk?.ratelimit_backoff).toBeGreaterThan(0);
    expect(m.stored).toBeLessThan(m.generated);
  });
});
