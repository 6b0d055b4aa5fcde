import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { errorEvent, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { tempSqlitePath } from '../support/postgres';
import { notStoredOnceViaApi } from '../support/read-back';

/**
 * The rate limit as a user meets it: no setting but the database file, so the default limit of
 * 100 events per second per app applies, and shedding is on.
 */
describe('rate limit with the defaults a user gets', () => {
  let collector: CollectorProcess;
  beforeAll(async () => {
    collector = await startCollectorProcess(
      { SLUICE_SQLITE_PATH: tempSqlitePath('ratelimit-defaults') },
      { defaults: 'user' },
    );
  });
  afterAll(async () => {
    await collector?.stop();
  });

  it('stores a 1000-event request whole at the limit rate when the client resends what is throttled', async () => {
    const app = `big-${Date.now()}`;
    const events = Array.from({ length: 1000 }, () => metric(app));
    let pending = events.map((_, i) => i);
    const started = Date.now();
    let first: number | undefined;
    let rounds = 0;
    while (pending.length > 0) {
      rounds++;
      if (rounds > 40 || Date.now() - started > 30_000) {
        throw new Error(`after ${rounds} rounds, ${pending.length} events still throttled`);
      }
      const res = await postEvents(
        collector.url,
        pending.map((i) => events[i]),
      );
      expect([202, 429]).toContain(res.status);
      first ??= res.body.accepted;
      if (res.status === 202) break;
      expect(res.body.error).toBe('rate_limited');
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(2);
      const throttled = res.body.throttled ?? [];
      // Only what was throttled is resent (indices into this request), after Retry-After.
      pending = throttled.map((k) => pending[k] as number);
      await new Promise((r) => setTimeout(r, retryAfter * 1000));
    }
    const seconds = (Date.now() - started) / 1000;
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(100);
    // 100 at once, then 100 a second, answered in whole seconds: about 10 s.
    expect(seconds).toBeGreaterThan(8);
    expect(seconds).toBeLessThan(20);
    const ids = events.map((e) => e.id as string);
    await waitFor(
      'every event read back once',
      async () => (await notStoredOnceViaApi(collector.url, app, ids)).length === 0,
      15_000,
    );
  }, 60_000);

  it('admits three requests of 50 in one second in part, never refusing one whole, and errors past the limit', async () => {
    const app = `three-${Date.now()}`;
    const answers = [];
    for (let k = 0; k < 3; k++) {
      answers.push(
        await postEvents(collector.url, [...Array.from({ length: 50 }, () => metric(app)), errorEvent(app)]),
      );
    }
    const accepted = answers.map((a) => a.body.accepted ?? 0);
    expect(accepted[0]).toBe(51);
    expect(accepted[1]).toBe(51);
    // The third finds the budget (almost) spent: its error is taken, its metrics throttled in order.
    const third = answers[2];
    expect(third?.status).toBe(429);
    expect(third?.body.throttled?.length).toBe(51 - (accepted[2] ?? 0));
    expect(third?.body.throttled).not.toContain(50);
  });
});
