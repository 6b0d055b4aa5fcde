/**
 * The loss map end to end with the defaults a user gets: the real SDK against a real collector
 * process (rate limit 100 events/s, shedding on) on SQLite (tier 1) and PostgreSQL, offering more than the limit from a
 * small buffer, with events invalid at capture and a collector restart in the middle. After the
 * SDK's flush and the pipeline's drain, the loss map of the window holds exactly: nothing pending,
 * generated = stored + Σ losses, `stored` = the rows in the database, and each SDK loss equals
 * what the SDK itself counted. Build first: `npm run build` (`npm test` does).
 */
import { createClient, type Client } from '../../sdk/src';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { waitFor } from '../support/http';
import { settledLossMap, totalLosses, type StorageAt } from '../support/loss-map';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

jest.setTimeout(90_000);

describe.each(['sqlite', 'postgres'] as const)(
  'loss map end to end (SDK → collector → %s, defaults, a restart)',
  (kind) => {
    let db: TestDatabase | null = null;
    let at: StorageAt;
    let collector: CollectorProcess | null = null;
    // A burst of 1 s: the app offers more than its per-second budget, so 429s and advice happen
    // within the few hundred events the test sends (the default burst of 10 s would take them all).
    const storageEnv = (): Record<string, string> => ({
      SLUICE_RATE_LIMIT_BURST: '1s',
      ...(at.kind === 'postgres' ? { SLUICE_DATABASE_URL: at.url } : { SLUICE_SQLITE_PATH: at.path }),
    });

    beforeAll(async () => {
      db = kind === 'postgres' ? await createTestDatabase('loss_map_e2e') : null;
      at = db ? { kind: 'postgres', url: db.url } : { kind: 'sqlite', path: tempSqlitePath('loss_map_e2e') };
    });

    afterAll(async () => {
      await collector?.stop();
      await db?.drop();
    });

    it('accounts for every event the app generated, exactly', async () => {
      const app = `lossmap-e2e-${kind}-${process.pid}`;
      collector = await startCollectorProcess(storageEnv(), { defaults: 'user' });
      const port = collector.port;
      const client: Client = createClient({
        endpoint: `${collector.url}/v1/events`,
        app,
        buffer: { maxEvents: 150 },
        flushIntervalMs: 50,
        onError: () => {},
      });

      let invalid = 0;
      const capture = (n: number): void => {
        for (let i = 0; i < n; i++) {
          if (i % 40 === 0) invalid++;
          if (i % 45 === 0) invalid++;
          client.log('cart.updated', `item ${i}`);
          if (i % 10 === 0) client.lifecycle('checkout.step');
          if (i % 50 === 0) client.error(new Error(`failure ${i}`));
          if (i % 40 === 0) client.metric('render.frame_drop', Number.NaN); // invalid at capture
          if (i % 45 === 0) client.log('not a name!', 'x'); // invalid at capture
        }
      };

      // More than the limit at once, from a buffer of 150: 429s, dynamic sampling, priority drops.
      capture(400);
      await waitFor(
        'the collector throttling the app',
        async () => client.stats().requests.throttled > 0,
        20_000,
      );
      // A restart while the SDK keeps capturing and sending (network errors, then the new process).
      const stopping = collector.stop();
      capture(200);
      expect(await stopping).toBe(0);
      collector = await startCollectorProcess(
        { ...storageEnv(), SLUICE_PORT: String(port) },
        { defaults: 'user' },
      );
      capture(100);
      await client.flush({ timeoutMs: 60_000 });
      const stats = client.stats();
      expect(stats.buffered.total + stats.inFlight).toBe(0);

      const m = await settledLossMap(collector.url, app, at, 30_000);
      // Every capture call is generated: sent, or lost in the SDK with the reason it counted.
      expect(m.generated).toBe(stats.captured + stats.dropped.sampled + stats.dropped.invalid);
      expect(m.losses.sdk).toEqual(
        Object.fromEntries(
          (['sampled', 'buffer_full', 'invalid', 'client_error'] as const)
            .filter((r) => stats.dropped[r] > 0)
            .map((r) => [r, stats.dropped[r]]),
        ),
      );
      expect(stats.dropped.buffer_full).toBeGreaterThan(0);
      expect(stats.dropped.invalid).toBe(invalid);
      expect(m.pending).toEqual({ sdk: 0, pipeline: 0 });
      expect(m.stored).toBe(stats.sent);
      expect(m.generated).toBe(m.stored + totalLosses(m));
      expect(m.throttled.rate_limited ?? 0).toBeGreaterThan(0);
      await client.close();
    });
  },
);
