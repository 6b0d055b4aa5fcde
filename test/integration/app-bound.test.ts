import { createClient } from '../../sdk/src';
import { log } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

// Up to 15 s waiting for a fresh minute, then 10,200 events of as many apps.
jest.setTimeout(120_000);

/**
 * Unbounded app names, with the defaults a user gets (no keys, the default bound of 10,000 distinct
 * apps a minute): a client that invents app names gets its first names in and the rest refused
 * one by one (`too_many_apps`), counted in the metrics and, under app `''`, in the loss map; an app
 * that was sending keeps sending, and no loss-map count is made per refused name.
 */
describe.each(['sqlite', 'postgres'] as const)('the bound on distinct apps (%s)', (kind) => {
  let db: TestDatabase | null = null;
  let c: InProcessCollector;

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase('app_bound') : null;
    c = await startInProcess(
      db ? { SLUICE_DATABASE_URL: db.url } : { SLUICE_SQLITE_PATH: tempSqlitePath('app_bound') },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
    await db?.drop();
  });

  async function rejectedTooManyApps(): Promise<number> {
    const text = await (await fetch(`${c.url}/metrics`)).text();
    const line = text
      .split('\n')
      .find((l) => l.startsWith('sluice_events_rejected_total{reason="too_many_apps"}'));
    return line === undefined ? 0 : Number(line.split(' ').pop());
  }

  it('takes 10,000 apps a minute, refuses the 10,001st and later names with a hint, and keeps taking an app it took', async () => {
    // A real app first, through the SDK.
    const honest = createClient({ endpoint: `${c.url}/v1/events`, app: 'honest-app', onError: () => {} });
    honest.log('app.started', 'up');
    await honest.flush();

    // A client that invents a name per event: 10,200 names in requests of 1,000 (the most a request
    // holds), within the same minute (a minute boundary between them would only let more in, never
    // fewer). Logs, one per app: each within its app's limit, through the standard lane of 10,000.
    const minuteLeft = 60_000 - (Date.now() % 60_000);
    if (minuteLeft < 15_000) await new Promise((r) => setTimeout(r, minuteLeft + 100));
    const invented = Array.from({ length: 10_200 }, (_, i) => log(`invented-${i}`));
    // Each request as a client sends it: the throttled indices again after Retry-After (the error
    // lane holds 2,000 events), until every event is taken or refused.
    const send = async (events: readonly unknown[]) => {
      let accepted = 0;
      const rejected: Array<{ index: number; reason: string; field?: string; hint?: string }> = [];
      let pending = events.map((_, i) => i);
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt === 20) throw new Error(`${pending.length} events still throttled`);
        const answer = await postEvents(
          c.url,
          pending.map((i) => events[i]),
        );
        // 422: every event of the request refused.
        expect([202, 422, 429]).toContain(answer.status);
        accepted += answer.body.accepted ?? 0;
        for (const r of answer.body.rejected ?? [])
          rejected.push({ ...r, index: pending[r.index] as number });
        const throttled = (answer.body.throttled ?? []).map((i) => pending[i] as number);
        if (throttled.length > 0) {
          const seconds = Number(answer.headers.get('retry-after') ?? '1');
          await new Promise((r) => setTimeout(r, seconds * 1000));
        }
        pending = throttled;
      }
      return { accepted, rejected };
    };
    for (let start = 0; start < 9_000; start += 1000) {
      expect((await send(invented.slice(start, start + 1000))).accepted).toBe(1000);
    }
    // 9,999 apps fit beside honest-app: 999 of this request, and then none.
    const second = await send(invented.slice(9_000, 10_000));
    expect(second.accepted).toBe(999);
    const last = await send(invented.slice(10_000));
    expect(last.accepted).toBe(0);
    const refused = [...second.rejected, ...last.rejected.map((r) => ({ ...r, index: r.index + 1000 }))];
    expect(refused).toHaveLength(201);
    expect(refused.map((r) => r.index)).toEqual(Array.from({ length: 201 }, (_, i) => 999 + i));
    expect(refused.every((r) => r.reason === 'too_many_apps' && r.field === 'source.app')).toBe(true);
    expect((refused[0] as { hint?: string }).hint).toContain('SLUICE_MAX_APPS_PER_MINUTE');

    // The honest app keeps sending, and an invented name it took is still taken.
    honest.log('cart.updated', 'still here');
    expect((await postEvents(c.url, [log('invented-5'), log('honest-app')])).body.accepted).toBe(2);
    await honest.close();
    expect(await rejectedTooManyApps()).toBe(201);

    // Counted under app '' in the loss map, not under the refused names.
    const to = Date.now() + 60_000;
    const window = `from=${to - 3_600_000}&to=${to}`;
    const none = await waitFor('the refusals in the loss map', async () => {
      const r = await getJson(`${c.url}/v1/outcomes?app=&${window}`);
      return r.body.losses?.collector?.too_many_apps === 201 ? r.body : null;
    });
    expect(none.generated).toBe(201);
    const named = await getJson(`${c.url}/v1/outcomes?app=invented-10100&${window}`);
    expect(named.body.generated).toBe(0);
    const honestMap = await waitFor('the honest app stored and reported', async () => {
      const r = await getJson(`${c.url}/v1/outcomes?app=honest-app&${window}`);
      return r.body.stored === 3 && r.body.pending.sdk === 0 && r.body.pending.pipeline === 0 ? r.body : null;
    });
    expect(honestMap.lost).toBe(0);
  });
});
