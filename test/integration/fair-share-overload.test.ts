import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { startCollectorProcess } from '../support/collector-process';
import { log } from '../support/events';
import { postEvents } from '../support/http';
import { storedCounts } from '../support/pg-client';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

/** How long the loud app floods, and the most requests it sends: the bounds of this load loop. */
const FLOOD_MS = 12_000;
const MAX_FLOOD_REQUESTS = 3000;
/** The loud app's concurrent senders, each with a body of the most events a request may carry. */
const FLOOD_SENDERS = 8;
const FLOOD_BODY_EVENTS = 1000;
const QUIET_APPS = 3;
/** Each quiet app's rate: one request of 10 events a second. */
const QUIET_PER_REQUEST = 10;

/** A body of `n` metric samples of `app`, written as text: the flood must not spend its CPU on JSON.stringify. */
function floodBody(app: string, n: number): string {
  const ts = Date.now();
  const events: string[] = [];
  for (let i = 0; i < n; i++) {
    events.push(
      `{"id":"${randomUUID()}","type":"metric","name":"flood.sample","ts":${ts},"source":{"app":"${app}"},"value":${i}}`,
    );
  }
  return `{"events":[${events.join(',')}]}`;
}

/**
 * One app floods a collector (limits off, every other setting at its default) with as much as it
 * takes, far more than storage drains, beside quiet apps at 10 events/s: the quiet apps' events are
 * stored, and the lanes' refusals fall on the loud app (docs/operations.md, "Fair shares").
 */
describe.each(['sqlite', 'postgres'] as const)('fair shares under overload (%s)', (kind) => {
  let db: TestDatabase | null = null;

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase('fair_share') : null;
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('keeps quiet apps whole while one app floods, with limits off', async () => {
    const sqlitePath = tempSqlitePath('fair_share');
    const c = await startCollectorProcess(
      {
        ...(db ? { SLUICE_DATABASE_URL: db.url } : { SLUICE_SQLITE_PATH: sqlitePath }),
        SLUICE_RATE_LIMIT: '0',
      },
      { defaults: 'user' },
    );
    const deadline = Date.now() + FLOOD_MS;
    const loud = { sent: 0, requests: 0, throttled: 0, overloaded: 0 };
    const flood = async (): Promise<void> => {
      while (Date.now() < deadline && loud.requests < MAX_FLOOD_REQUESTS) {
        loud.requests++;
        const res = await postEvents(c.url, null, {
          raw: floodBody('loud', FLOOD_BODY_EVENTS),
          headers: { 'x-sluice-app': 'loud' },
        });
        loud.sent += FLOOD_BODY_EVENTS;
        if (res.body.error === 'overloaded') loud.overloaded++;
        loud.throttled += res.body.throttled?.length ?? 0;
      }
    };
    // A quiet app sends each event once, naming its app as the SDK does: every refusal of a quiet
    // event, unread (`overloaded`) or throttled, is a loss here.
    const quietIds = new Map<string, string[]>();
    const quiet = { throttled: 0, overloaded: 0 };
    const quietApp = async (app: string): Promise<void> => {
      while (Date.now() < deadline) {
        const due = Date.now() + 1000;
        const batch = Array.from({ length: QUIET_PER_REQUEST }, () => log(app));
        const ids = quietIds.get(app) ?? quietIds.set(app, []).get(app) ?? [];
        for (const e of batch) ids.push(e.id as string);
        const res = await postEvents(c.url, batch, { headers: { 'x-sluice-app': app } });
        if (res.body.error === 'overloaded') quiet.overloaded++;
        quiet.throttled += res.body.throttled?.length ?? 0;
        await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
      }
    };
    try {
      await Promise.all([
        ...Array.from({ length: FLOOD_SENDERS }, flood),
        ...Array.from({ length: QUIET_APPS }, (_, i) => quietApp(`quiet-${i}`)),
      ]);
      const metrics = await (await fetch(`${c.url}/metrics`)).text();
      const shares = /sluice_lane_share_refusals_total\{lane="standard"\} (\d+)/.exec(metrics)?.[1];
      process.stdout.write(`lane share refusals (${kind}): ${shares ?? 'none'}\n`);
    } finally {
      // A clean stop writes every event the collector acknowledged before it exits.
      expect(await c.stop()).toBe(0);
    }
    const ids = [...quietIds.values()].flat();
    const stored = db ? await storedCounts(db.url, ids) : storedInSqlite(sqlitePath, ids);
    const storedOnce = ids.filter((id) => stored.get(id) === 1).length;
    process.stdout.write(
      `fair shares (${kind}): loud ${JSON.stringify(loud)}; quiet sent ${ids.length}, stored ${storedOnce}, ${JSON.stringify(quiet)}\n`,
    );
    // The collector was overloaded, and refused the loud app.
    expect(loud.throttled + loud.overloaded).toBeGreaterThan(0);
    expect(storedOnce / ids.length).toBeGreaterThanOrEqual(0.99);
  }, 60_000);
});

/** How often each of `ids` is stored among the events of a SQLite file (the collector stopped). */
function storedInSqlite(path: string, ids: readonly string[]): Map<string, number> {
  const file = new Database(path, { readonly: true });
  try {
    const counts = new Map<string, number>();
    const wanted = new Set(ids);
    for (const { id } of file.prepare("SELECT id FROM events WHERE type = 'log'").all() as Array<{
      id: string;
    }>)
      if (wanted.has(id)) counts.set(id, (counts.get(id) ?? 0) + 1);
    return counts;
  } finally {
    file.close();
  }
}
