/**
 * A relay (an OpenTelemetry Collector, a gateway) batches many services into one request. With
 * the defaults a user gets, an export of 40 or 500 resources is taken on the first try, every
 * record under its own app; one app over its limit is refused alone, in OTLP's partial success,
 * and the others are stored. On `POST /v1/events`, one event from each of 2,000 apps is stored
 * after at most one resend of the throttled indices, in process and with Redis limits.
 */
import Database from 'better-sqlite3';
import { freePort } from '../../src/dev-cluster/free-port';
import { log } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { settledLossMap } from '../support/loss-map';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { tempSqlitePath } from '../support/postgres';
import { redisUrl, uniquePrefix } from '../support/redis';
import { errorSpan, gaugeRequest, logRecord, postOtlp, resourceOf, type Signal } from './otlp-requests';
import { uniqueApp, type Encoding } from './otlp-support';

jest.setTimeout(120_000);

/** Rows stored per app, read from the SQLite file (events and metric samples). */
function storedByApp(path: string): Map<string, number> {
  const db = new Database(path, { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT app, count(*) AS n FROM (SELECT app FROM events UNION ALL SELECT app FROM metric_samples) GROUP BY app`,
      )
      .all() as Array<{ app: string; n: number }>;
    return new Map(rows.map((r) => [r.app, Number(r.n)]));
  } finally {
    db.close();
  }
}

/** Waits until every app of `apps` has `perApp` rows stored. */
async function waitStored(path: string, apps: readonly string[], perApp: number): Promise<void> {
  await waitFor(
    `${apps.length} apps with ${perApp} rows each`,
    async () => {
      const stored = storedByApp(path);
      return apps.every((app) => (stored.get(app) ?? 0) >= perApp);
    },
    60_000,
  );
}

/** One export of `signal` with one resource per app, `records` records each. */
function manyResources(signal: Signal, apps: readonly string[], records = 1): unknown {
  if (signal === 'logs') {
    return {
      resourceLogs: apps.map((app) => ({
        resource: resourceOf(app),
        scopeLogs: [{ logRecords: Array.from({ length: records }, (_, i) => logRecord(i)) }],
      })),
    };
  }
  if (signal === 'metrics') {
    return {
      resourceMetrics: apps.map(
        (app) =>
          (gaugeRequest(app, [{ timeUnixNano: String(BigInt(Date.now()) * 1_000_000n), asDouble: 1 }]) as any)
            .resourceMetrics[0],
      ),
    };
  }
  return {
    resourceSpans: apps.map((app) => ({
      resource: resourceOf(app),
      scopeSpans: [{ spans: Array.from({ length: records }, (_, i) => errorSpan(i)) }],
    })),
  };
}

// Shedding by queueing delay is off: jest workers share two cores, and a request refused because
// another worker held the CPU says nothing about the rate limit. Every other setting is the user's.
const NO_SHED = { SLUICE_SHED_LAG_MS: '0' };

describe('an OTLP export from a relay of many services (defaults)', () => {
  let c: InProcessCollector;
  let otlpUrl: string;
  const path = tempSqlitePath('relay-otlp');

  beforeAll(async () => {
    c = await startInProcess(
      { SLUICE_SQLITE_PATH: path, SLUICE_OTLP_PORT: String(await freePort()), ...NO_SHED },
      { defaults: 'user' },
    );
    const otlp = c.collector.otlp;
    if (otlp === null) throw new Error('the OTLP receiver did not start');
    otlpUrl = otlp.url;
  });

  afterAll(async () => {
    await c?.stop();
  });

  describe.each([40, 500])('%i resources', (resources) => {
    it.each([
      ['logs', 'json'],
      ['logs', 'protobuf'],
      ['metrics', 'json'],
      ['metrics', 'protobuf'],
      ['traces', 'json'],
      ['traces', 'protobuf'],
    ] as Array<[Signal, Encoding]>)(
      '%s as %s: 200 on the first try, every record under its app',
      async (signal, encoding) => {
        const apps = Array.from({ length: resources }, (_, i) => uniqueApp(`relay${i}`));
        const answer = await postOtlp(otlpUrl, signal, manyResources(signal, apps), { encoding });
        expect(answer.status).toBe(200);
        expect(answer.body.partialSuccess ?? {}).not.toHaveProperty(
          'errorMessage',
          expect.stringMatching(/./),
        );
        await waitStored(path, apps, 1);
      },
    );
  });

  it('one app over its limit is refused alone, named in the partial success; the others are stored', async () => {
    const greedy = uniqueApp('greedy');
    // The greedy app spends its whole burst (10 s of 100 events/s) in one export, and goes into
    // debt with a second (an export is taken whole while the budget is positive).
    for (let i = 0; i < 2; i++) {
      expect((await postOtlp(otlpUrl, 'logs', manyResources('logs', [greedy], 1000))).status).toBe(200);
    }
    const quiet = Array.from({ length: 39 }, (_, i) => uniqueApp(`quiet${i}`));
    const answer = await postOtlp(otlpUrl, 'logs', manyResources('logs', [greedy, ...quiet], 2));
    expect(answer.status).toBe(200);
    expect(Number(answer.body.partialSuccess.rejectedLogRecords)).toBe(2);
    expect(answer.body.partialSuccess.errorMessage).toContain('rate_limited');
    expect(answer.body.partialSuccess.errorMessage).toContain(greedy);
    await waitStored(path, quiet, 2);
    expect(storedByApp(path).get(greedy)).toBe(2000);
    // The loss map counts what the relay brought, per app.
    const at = { kind: 'sqlite', path } as const;
    // Refused in a partial success, they are lost for good (exporters do not resend them). The
    // counts are written once a second: the map settles on all three exports.
    const greedyMap = await waitFor('the greedy app’s refusals in its loss map', async () => {
      const m = await settledLossMap(c.url, greedy, at);
      return m.generated === 2002 ? m : null;
    });
    expect(greedyMap).toMatchObject({ generated: 2002, stored: 2000, lost: 2 });
    expect(greedyMap.losses.collector).toEqual({ rate_limited: 2 });
    const quietMap = await settledLossMap(c.url, quiet[0] as string, at);
    expect(quietMap).toMatchObject({ generated: 2, stored: 2 });
  });
});

describe.each(['in process', 'Redis'] as const)(
  'POST /v1/events from 2,000 apps (defaults, limits %s)',
  (where) => {
    let c: InProcessCollector;
    const path = tempSqlitePath('relay-events');

    beforeAll(async () => {
      const redis: Record<string, string> =
        where === 'Redis'
          ? { SLUICE_REDIS_URL: redisUrl(), SLUICE_REDIS_KEY_PREFIX: uniquePrefix('relay') }
          : {};
      c = await startInProcess({ SLUICE_SQLITE_PATH: path, ...NO_SHED, ...redis }, { defaults: 'user' });
    });

    afterAll(async () => {
      await c?.stop();
    });

    it('stores every app’s event after at most one resend of the throttled indices', async () => {
      const apps = Array.from({ length: 2000 }, (_, i) => uniqueApp(`many${i}`));
      for (let start = 0; start < apps.length; start += 1000) {
        const events = apps.slice(start, start + 1000).map((app) => log(app));
        const first = await postEvents(c.url, events);
        expect([202, 429]).toContain(first.status);
        expect(first.body.rejected ?? []).toEqual([]);
        const throttled = first.body.throttled ?? [];
        if (throttled.length > 0) {
          // As a client does: after the answer's Retry-After.
          const retryAfterS = Number(first.headers.get('retry-after') ?? '1');
          await new Promise((r) => setTimeout(r, retryAfterS * 1000));
          const resend = await postEvents(
            c.url,
            throttled.map((i) => events[i]),
          );
          expect(resend.status).toBe(202);
        }
      }
      await waitStored(path, apps, 1);
    });
  },
);
