import { randomBytes } from 'node:crypto';
import type { BenchContext } from '../context';
import { round } from '../rows';
import type { BenchRow } from '../types';
import { median } from './limits';
import { runSluiceClosed, type SluiceClosedRun } from './sluice-closed';

const SUITE = 'ratelimit';
const CONCURRENCY = 4;
/** Paired rounds: the ratio is a median, so one noisy moment of a shared box does not decide it. */
const ROUNDS = { quick: 3, full: 5 };
const TARGET = 0.95;

type Mode = 'off' | 'redis';

/**
 * Throughput at saturation with the Redis rate limiter on against no limiter. The limit is far
 * above the load, so nothing is throttled by the limit (`share_429` counts lane-full answers, on both sides alike): on-vs-off measures what
 * the limiter costs, not throttling. With the default lease (SLUICE_REDIS_LEASE_MS) requests are
 * decided from the collector's lease and Redis is asked in the background.
 * Rounds are pairs of runs back to back, the order alternating between rounds so neither side
 * always runs first on a warming or cooling box; the ratio is the median of the pairs' ratios.
 * Target: at most 5% fewer events/s with the limiter on.
 */
export async function runRateLimitBench(ctx: BenchContext): Promise<BenchRow[]> {
  const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const pairs: Array<Record<Mode, SluiceClosedRun>> = [];
  const rounds = ctx.options.quick ? ROUNDS.quick : ROUNDS.full;
  for (let r = 0; r < rounds; r++) {
    const order: Mode[] = r % 2 === 0 ? ['off', 'redis'] : ['redis', 'off'];
    const pair: Partial<Record<Mode, SluiceClosedRun>> = {};
    for (const mode of order) {
      ctx.progress(`ratelimit: ${mode}, round ${r + 1}`);
      const extraEnv: Record<string, string> =
        mode === 'off'
          ? { SLUICE_RATE_LIMIT: '0' }
          : {
              SLUICE_RATE_LIMIT: '10000000',
              SLUICE_REDIS_URL: redisUrl,
              SLUICE_REDIS_KEY_PREFIX: `sluice-bench:${randomBytes(4).toString('hex')}`,
            };
      pair[mode] = await runSluiceClosed(ctx, {
        ack: 'queued',
        concurrency: CONCURRENCY,
        bodies: ctx.batches.bodies,
        settings: { extraEnv },
        label: `ratelimit_${mode}_${r}`,
      });
    }
    pairs.push(pair as Record<Mode, SluiceClosedRun>);
  }
  const rates = (mode: Mode) => pairs.map((p) => p[mode].storedPerSecond);
  const ratios = pairs.map((p) => p.redis.storedPerSecond / p.off.storedPerSecond);
  const ratio = median(ratios);
  const runs = (mode: Mode) => rates(mode).map(Math.round).join('/');
  const p99 = (mode: Mode) => round(median(pairs.map((p) => p[mode].load.latency.p99)));
  // Collector CPU per stored event: less at the mercy of other load on the box than events/s.
  const cpu = (mode: Mode) => round(median(pairs.map((p) => p[mode].cpuSecondsPerMillion)));
  const throttled = (mode: Mode) => round(Math.max(...pairs.map((p) => p[mode].throttledShare)));
  const offRow: BenchRow = {
    suite: SUITE,
    name: 'batched ingest, no rate limiter',
    value: median(rates('off')),
    unit: 'events/s stored',
    extra: {
      runs_events_s: runs('off'),
      p99_ms: p99('off'),
      cpu_s_per_M_events: cpu('off'),
      share_429: throttled('off'),
    },
  };
  const onRow: BenchRow = {
    suite: SUITE,
    name: 'batched ingest, Redis rate limiter on',
    value: median(rates('redis')),
    unit: 'events/s stored',
    baseline: offRow.name,
    ratio,
    target: `ratio ≥ ${TARGET} (median of ${pairs.length} paired rounds)`,
    met: ratio >= TARGET,
    extra: {
      runs_events_s: runs('redis'),
      paired_ratios: ratios.map(round).join('/'),
      p99_ms: p99('redis'),
      cpu_s_per_M_events: cpu('redis'),
      share_429: throttled('redis'),
    },
  };
  return [offRow, onRow];
}
