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

  it('takes a burst of 10 s of the limit at once, then stores the rest at the limit rate as the client resends what is throttled, advising it to sample', async () => {
    const app = `big-${Date.now()}`;
    const events = Array.from({ length: 1500 }, () => metric(app));
    let pending = events.map((_, i) => i);
    const started = Date.now();
    let first: number | undefined;
    const advice: Array<{ body: unknown; header: string | null }> = [];
    let rounds = 0;
    while (pending.length > 0) {
      rounds++;
      if (rounds > 40 || Date.now() - started > 30_000) {
        throw new Error(`after ${rounds} rounds, ${pending.length} events still throttled`);
      }
      const chunk = pending.slice(0, 1000);
      const res = await postEvents(
        collector.url,
        chunk.map((i) => events[i]),
      );
      expect([202, 429]).toContain(res.status);
      first ??= res.body.accepted;
      if (res.status === 202) {
        pending = pending.slice(1000);
        continue;
      }
      expect(res.body.error).toBe('rate_limited');
      advice.push({ body: res.body.sample_rate, header: res.headers.get('x-sluice-sample-rate') });
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(2);
      const throttled = res.body.throttled ?? [];
      // Only what was throttled is resent (indices into this request), after Retry-After.
      pending = [...throttled.map((k) => chunk[k] as number), ...pending.slice(1000)];
      await new Promise((r) => setTimeout(r, retryAfter * 1000));
    }
    const seconds = (Date.now() - started) / 1000;
    // The burst at once, then 100 a second, answered in whole seconds: about 5 s.
    expect(first).toBe(1000);
    expect(seconds).toBeGreaterThan(3);
    expect(seconds).toBeLessThan(15);
    // Each refusal advised the app to sample below 1, in the body and the header alike.
    expect(advice.length).toBeGreaterThan(0);
    for (const a of advice) {
      expect(typeof a.body).toBe('number');
      expect(a.body).toBeLessThan(1);
      expect(a.header).toBe(String(a.body));
    }
    const ids = events.map((e) => e.id as string);
    await waitFor(
      'every event read back once',
      async () => (await notStoredOnceViaApi(collector.url, app, ids)).length === 0,
      15_000,
    );
  }, 60_000);

  it('admits three requests of 400 in one second in part, never refusing one whole, and errors past the limit', async () => {
    const app = `three-${Date.now()}`;
    const answers = [];
    for (let k = 0; k < 3; k++) {
      answers.push(
        await postEvents(collector.url, [...Array.from({ length: 400 }, () => metric(app)), errorEvent(app)]),
      );
    }
    const accepted = answers.map((a) => a.body.accepted ?? 0);
    expect(accepted[0]).toBe(401);
    expect(accepted[1]).toBe(401);
    // The third finds the burst (almost) spent: its error is spent, its metrics throttled in order.
    const third = answers[2];
    expect(third?.status).toBe(429);
    expect(third?.body.throttled?.length).toBe(401 - (accepted[2] ?? 0));
    expect(third?.body.throttled).not.toContain(400);
    // A plain sender gets no advice until its limit refuses it.
    expect(answers[0]?.body.sample_rate).toBeUndefined();
    expect(third?.body.sample_rate).toBeLessThan(1);
  });
});
