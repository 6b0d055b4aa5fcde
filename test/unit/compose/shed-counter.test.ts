import { Registry } from 'prom-client';
import { ApiKeyRing, generateKey } from '../../../src/auth/api-keys';
import { shedCounter } from '../../../src/compose/outcomes';
import type { ShedRequest } from '../../../src/intake/shed-rule';
import { createLogger } from '../../../src/log/logger';
import { createOutcomeMetrics } from '../../../src/metrics/outcome-instruments';
import type { OutcomeBatch } from '../../../src/loss-map/outcome';
import { OutcomeRecorder } from '../../../src/loss-map/outcome-recorder';

/** Whose a shed request is: the app of a valid ingest key (a Sentry DSN key too), else `''` (nothing else is read of it). */
describe('shedCounter', () => {
  const ingest = generateKey('ingest', 'shop-key', 'web-shop');
  const dsn = generateKey('ingest', 'checkout_dsn', 'checkout');
  const read = generateKey('read', 'grafana');
  const ring = ApiKeyRing.parse(JSON.stringify({ keys: [ingest.entry, dsn.entry, read.entry] }), 'keys.json');

  async function shedApps(keyRing: ApiKeyRing | null, requests: ShedRequest[]) {
    const written: OutcomeBatch[] = [];
    const recorder = new OutcomeRecorder({
      write: async (b) => void written.push(b),
      flushIntervalMs: 60_000,
      clock: { now: () => 0 },
      metrics: createOutcomeMetrics(new Registry()),
      logger: createLogger('silent'),
    });
    const count = shedCounter(recorder, keyRing, { now: () => 90_000 });
    for (const r of requests) count(r);
    await recorder.stop();
    return written
      .flatMap((b) => b.counts)
      .map(({ app, minute, type, outcome, reason, count: n }) => [app, minute, type, outcome, reason, n]);
  }

  it('counts a request with a valid ingest key for its app, any other for app "", in the minute of receipt', async () => {
    expect(
      await shedApps(
        ring,
        [
          { 'x-api-key': ingest.secret },
          { authorization: `Bearer ${ingest.secret}` },
          { 'x-api-key': 'sk_in_not-a-key' },
          { 'x-api-key': read.secret },
          {},
        ].map((headers) => ({ method: 'POST', url: '/v1/events', headers })),
      ),
    ).toEqual([
      ['web-shop', 60_000, '', 'shed', 'overloaded', 2],
      ['', 60_000, '', 'shed', 'overloaded', 3],
    ]);
  });

  it('counts a Sentry request for the app of its DSN key (X-Sentry-Auth or ?sentry_key=), on the Sentry paths only', async () => {
    const envelope = (url: string, headers: Record<string, string> = {}) => ({
      method: 'POST',
      url,
      headers,
    });
    expect(
      await shedApps(ring, [
        envelope('/api/1/envelope/', { 'x-sentry-auth': 'Sentry sentry_version=7, sentry_key=checkout_dsn' }),
        envelope('/api/1/envelope/?sentry_key=checkout_dsn&sentry_version=7'),
        envelope('/api/1/store/', { 'x-sentry-auth': `Sentry sentry_key=${dsn.secret}` }),
        envelope('/api/1/envelope/?sentry_key=grafana'),
        envelope('/api/1/envelope/?sentry_key=nobody'),
        envelope('/v1/events?sentry_key=checkout_dsn'),
      ]),
    ).toEqual([
      ['checkout', 60_000, '', 'shed', 'overloaded', 3],
      ['', 60_000, '', 'shed', 'overloaded', 3],
    ]);
  });

  it('counts every request for app "" when auth is off', async () => {
    expect(
      await shedApps(null, [
        { headers: { 'x-api-key': ingest.secret } },
        { method: 'POST', url: '/api/1/envelope/?sentry_key=checkout_dsn', headers: {} },
        { headers: {} },
      ]),
    ).toEqual([['', 60_000, '', 'shed', 'overloaded', 3]]);
  });
});
