import { createClient } from '../../sdk/src';
import { errorEvent, log } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

/**
 * Unbounded app names, with the defaults a user gets (no keys, the default bound of 1000 distinct
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

  it('takes 1000 apps a minute, refuses the 1001st and later names with a hint, and keeps taking an app it took', async () => {
    // A real app first, through the SDK.
    const honest = createClient({ endpoint: `${c.url}/v1/events`, app: 'honest-app', onError: () => {} });
    honest.log('app.started', 'up');
    await honest.flush();

    // A client that invents a name per event: 1,200 names in two requests, within the same minute
    // (a minute boundary between them would only let more in, never fewer). Errors, which the rate
    // limit (and its bound on apps per request) never holds back.
    const minuteLeft = 60_000 - (Date.now() % 60_000);
    if (minuteLeft < 10_000) await new Promise((r) => setTimeout(r, minuteLeft + 100));
    const invented = Array.from({ length: 1200 }, (_, i) => errorEvent(`invented-${i}`));
    const first = await postEvents(c.url, invented.slice(0, 600));
    const second = await postEvents(c.url, invented.slice(600));
    expect(first.status).toBe(202);
    expect(first.body.accepted).toBe(600);
    // 999 apps fit beside honest-app: 399 of this request, and then none.
    expect(second.status).toBe(202);
    expect(second.body.accepted).toBe(399);
    const refused = second.body.rejected ?? [];
    expect(refused).toHaveLength(201);
    expect(refused.map((r) => r.index)).toEqual(Array.from({ length: 201 }, (_, i) => 399 + i));
    expect(refused.every((r) => r.reason === 'too_many_apps' && r.field === 'source.app')).toBe(true);
    expect((refused[0] as { hint?: string }).hint).toContain('SLUICE_MAX_APPS_PER_MINUTE');

    // The honest app keeps sending, and an invented name it took is still taken.
    honest.log('cart.updated', 'still here');
    expect((await postEvents(c.url, [errorEvent('invented-5'), log('honest-app')])).body.accepted).toBe(2);
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
    const named = await getJson(`${c.url}/v1/outcomes?app=invented-1100&${window}`);
    expect(named.body.generated).toBe(0);
    const honestMap = await waitFor('the honest app stored and reported', async () => {
      const r = await getJson(`${c.url}/v1/outcomes?app=honest-app&${window}`);
      return r.body.stored === 3 && r.body.pending.sdk === 0 && r.body.pending.pipeline === 0 ? r.body : null;
    });
    expect(honestMap.lost).toBe(0);
  });
});
