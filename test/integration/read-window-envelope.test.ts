import { log } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

/**
 * Two rules of the contract that held on some routes only: a window whose `from` is not before its
 * `to` is one 400 on every read route (not an empty 200, nor a window rewritten), and a body that
 * gives an envelope member twice is refused whole (JSON.parse would keep the last and drop the
 * first's events without a word). Both storages, the defaults a user gets.
 */
describe.each(['sqlite', 'postgres'] as const)('read windows and the envelope (%s)', (kind) => {
  let db: TestDatabase | null = null;
  let c: InProcessCollector;
  const app = `window-${kind}-${process.pid}`;

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase('read_window') : null;
    c = await startInProcess(
      db ? { SLUICE_DATABASE_URL: db.url } : { SLUICE_SQLITE_PATH: tempSqlitePath('read_window') },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
    await db?.drop();
  });

  const now = Date.now();
  const reversed = `from=${now}&to=${now - 3_600_000}`;
  it.each([
    `/v1/events?app=x&${reversed}`,
    `/v1/metrics?name=x&${reversed}`,
    `/v1/metrics/names?${reversed}`,
    `/v1/apps?${reversed}`,
    `/v1/error-groups?${reversed}`,
    `/v1/outcomes?app=x&${reversed}`,
    // An empty window too: `from` is inclusive, `to` exclusive.
    `/v1/events?from=${now}&to=${now}`,
    `/v1/outcomes?app=x&from=${now}&to=${now}`,
  ])('answers 400 naming "from", with the rule, to %s', async (path) => {
    const res = await getJson(`${c.url}${path}`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_parameter');
    expect(res.body.message).toMatch(/^Query parameter "from" must be before "to"/);
    expect(res.body.message).toContain('inclusive');
  });

  it('refuses a body that gives "events" (or any member) twice, and stores none of it', async () => {
    const a = log(app, { message: 'first' });
    const b = log(app, { message: 'second' });
    for (const raw of [
      `{"events":[${JSON.stringify(a)}],"events":[${JSON.stringify(b)}]}`,
      // An escaped key is the same member to JSON.parse.
      `{"events":[${JSON.stringify(a)}],"\\u0065vents":[${JSON.stringify(b)}]}`,
      `{"events":[${JSON.stringify(a)}, ${JSON.stringify(b)}],"report":{"rows":[]},"report":{"rows":[]}}`,
    ]) {
      const res = await postEvents(c.url, null, { raw });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_body');
      expect(res.body.message).toMatch(/member "(events|report)" more than once/);
    }
    // A body with each member once is taken, and the read sees only it.
    const c1 = log(app, { message: 'third' });
    expect((await postEvents(c.url, [c1])).status).toBe(202);
    const stored = await waitFor('the event stored', async () => {
      const r = await getJson(`${c.url}/v1/events?app=${app}`);
      return r.body.events.length > 0 ? r.body.events : null;
    });
    expect(stored.map((e: { id: string }) => e.id)).toEqual([c1.id]);
  });
});
