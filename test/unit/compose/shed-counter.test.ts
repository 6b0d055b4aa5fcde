import { Registry } from 'prom-client';
import { ApiKeyRing, generateKey } from '../../../src/auth/api-keys';
import { shedCounter } from '../../../src/compose/outcomes';
import { createLogger } from '../../../src/log/logger';
import { createOutcomeMetrics } from '../../../src/metrics/outcome-instruments';
import type { OutcomeBatch } from '../../../src/outcomes/outcome';
import { OutcomeRecorder } from '../../../src/outcomes/outcome-recorder';

/** Whose a shed request is: the app of a valid ingest key, else `''` (nothing else is read of it). */
describe('shedCounter', () => {
  const ingest = generateKey('ingest', 'shop-key', 'web-shop');
  const read = generateKey('read', 'grafana');
  const ring = ApiKeyRing.parse(JSON.stringify({ keys: [ingest.entry, read.entry] }), 'keys.json');

  async function shedApps(keyRing: ApiKeyRing | null, requests: Array<Record<string, string>>) {
    const written: OutcomeBatch[] = [];
    const recorder = new OutcomeRecorder({
      write: async (b) => void written.push(b),
      flushIntervalMs: 60_000,
      clock: { now: () => 0 },
      metrics: createOutcomeMetrics(new Registry()),
      logger: createLogger('silent'),
    });
    const count = shedCounter(recorder, keyRing, { now: () => 90_000 });
    for (const headers of requests) count(headers);
    await recorder.stop();
    return written
      .flatMap((b) => b.counts)
      .map(({ app, minute, type, outcome, reason, count: n }) => [app, minute, type, outcome, reason, n]);
  }

  it('counts a request with a valid ingest key for its app, any other for app "", in the minute of receipt', async () => {
    expect(
      await shedApps(ring, [
        { 'x-api-key': ingest.secret },
        { authorization: `Bearer ${ingest.secret}` },
        { 'x-api-key': 'sk_in_not-a-key' },
        { 'x-api-key': read.secret },
        {},
      ]),
    ).toEqual([
      ['web-shop', 60_000, '', 'shed', 'overloaded', 2],
      ['', 60_000, '', 'shed', 'overloaded', 3],
    ]);
  });

  it('counts every request for app "" when auth is off', async () => {
    expect(await shedApps(null, [{ 'x-api-key': ingest.secret }, {}])).toEqual([
      ['', 60_000, '', 'shed', 'overloaded', 2],
    ]);
  });
});
