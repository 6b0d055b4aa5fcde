import { randomBytes } from 'node:crypto';
import { Registry } from 'prom-client';
import { systemClock } from '../../../src/clock';
import { createRateLimitsAndKeys } from '../../../src/compose/rate-limits-and-keys';
import { loadConfig } from '../../../src/config/load';
import { createLogger } from '../../../src/log/logger';
import type { LimitAsk } from '../../../src/ratelimit/event-rate-limiter';
import type { BenchContext } from '../context';
import { round } from '../rows';
import type { BenchRow } from '../types';
import { median } from './limits';

const SUITE = 'relay-apps';
/** Apps per request: an SDK's one, the old cap, and relays of 100 and 1,000 services. */
const APPS = [1, 16, 100, 1000] as const;
/** Requests measured per point (each of new apps: a relay's services arriving, the limiter's dearest case). */
const REQUESTS = { quick: 20, full: 60 };
/** The cost per request may grow with its apps, no faster: µs per app at 1,000 apps ≤ this × at 1. */
const TARGET_PER_APP = 2;

type Where = 'in process' | 'Redis';

/**
 * The rate limiter's cost per request when a request carries events of many apps, as a relay's
 * does: every app of the request is asked about in one call (one pipelined round trip with Redis),
 * so the cost grows with the apps of the request and never turns into a refusal. Each request
 * names new apps (a bucket or a lease to create, and with Redis a round trip for each), which is
 * the dearest case. Reports µs per request and per app, and which store answered with Redis (the
 * insurance answers when a pipelined call takes longer than `SLUICE_REDIS_TIMEOUT_MS`).
 */
export async function runRelayAppsBench(ctx: BenchContext): Promise<BenchRow[]> {
  const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const requests = ctx.options.quick ? REQUESTS.quick : REQUESTS.full;
  const rows: BenchRow[] = [];
  for (const where of ['in process', 'Redis'] as const) {
    const env: Record<string, string> =
      where === 'Redis'
        ? {
            SLUICE_REDIS_URL: redisUrl,
            SLUICE_REDIS_KEY_PREFIX: `sluice-bench:${randomBytes(4).toString('hex')}`,
          }
        : {};
    const limiting = createRateLimitsAndKeys(
      loadConfig({ SLUICE_LOG_LEVEL: 'silent', ...env }),
      new Registry(),
      systemClock,
      createLogger('silent'),
    );
    const limiter = limiting.rateLimiter;
    if (limiter === null) throw new Error('the default settings have no rate limiter');
    try {
      if (where === 'Redis') await waitForRedis(() => limiting.redisHealth());
      let perAppAtOne = NaN;
      for (const apps of APPS) {
        ctx.progress(`relay-apps: ${where}, ${apps} apps a request`);
        const times: number[] = [];
        let fromRedis = 0;
        let grants = 0;
        for (let r = 0; r < requests; r++) {
          const tag = randomBytes(4).toString('hex');
          const asks: LimitAsk[] = Array.from({ length: apps }, (_, i) => ({
            subject: { key: `app:relay-${tag}-${i}`, app: `relay-${tag}-${i}` },
            events: 1,
            mode: 'partial',
          }));
          const t0 = performance.now();
          const answer = await limiter.spend(asks);
          times.push((performance.now() - t0) * 1000);
          for (const g of answer) {
            grants++;
            if (g.store === 'redis') fromRedis++;
          }
        }
        const perRequest = median(times);
        const perApp = perRequest / apps;
        if (apps === 1) perAppAtOne = perApp;
        const ratio = perApp / perAppAtOne;
        rows.push({
          suite: SUITE,
          name: nameOf(where, apps),
          value: round(perRequest),
          unit: 'µs/request',
          ...(apps > 1 && {
            baseline: nameOf(where, 1),
            ratio: round(ratio),
            target: `µs per app ≤ ${TARGET_PER_APP} × at 1 app`,
            met: ratio <= TARGET_PER_APP,
          }),
          extra: {
            us_per_app: round(perApp),
            p95_us: round(times.sort((a, b) => a - b)[Math.floor(times.length * 0.95)] ?? NaN),
            ...(where === 'Redis' && { share_from_redis: round(fromRedis / grants) }),
          },
        });
      }
    } finally {
      await limiter.close();
      await limiting.close();
    }
  }
  return rows;
}

async function waitForRedis(health: () => string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (health() !== 'up') {
    if (Date.now() > deadline) throw new Error(`Redis not ready (${health()}): start redis-server`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function nameOf(where: Where, apps: number): string {
  return `rate limiter (${where}), ${apps} new app${apps === 1 ? '' : 's'} a request`;
}
