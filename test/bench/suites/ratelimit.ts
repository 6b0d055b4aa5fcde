import { randomBytes } from 'node:crypto';
import type { BenchContext } from '../context';
import { figure, versus } from '../rows';
import type { BenchRow } from '../types';
import { runSluiceClosed, type SluiceClosedRun } from './sluice-closed';

const SUITE = 'ratelimit';
const CONCURRENCY = 4;

/**
 * Throughput at saturation with the Redis rate limiter on (a limit high
 * enough that nothing is throttled: every request pays the Redis round trip)
 * against no limiter, alternating so both sides see the same box.
 * Target: at most 10% fewer events/s with the limiter on.
 */
export async function runRateLimitBench(ctx: BenchContext): Promise<BenchRow[]> {
  const redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
  const runs: Record<'off' | 'redis', SluiceClosedRun[]> = { off: [], redis: [] };
  for (let round = 0; round < 2; round++) {
    for (const mode of ['off', 'redis'] as const) {
      ctx.progress(`ratelimit: ${mode}, round ${round + 1}`);
      const extraEnv: Record<string, string> =
        mode === 'off'
          ? { SLUICE_RATE_LIMIT: '0' }
          : {
              SLUICE_RATE_LIMIT: '10000000',
              SLUICE_REDIS_URL: redisUrl,
              SLUICE_REDIS_KEY_PREFIX: `sluice-bench:${randomBytes(4).toString('hex')}`,
            };
      runs[mode].push(
        await runSluiceClosed(ctx, {
          ack: 'queued',
          concurrency: CONCURRENCY,
          bodies: ctx.batches.bodies,
          settings: { extraEnv },
          label: `ratelimit_${mode}_${round}`,
        }),
      );
    }
  }
  const best = (rs: SluiceClosedRun[]) =>
    rs.reduce((a, b) => (b.storedPerSecond > a.storedPerSecond ? b : a));
  const off = best(runs.off);
  const on = best(runs.redis);
  const offRow = figure(SUITE, 'batched ingest, no rate limiter', off.storedPerSecond, 'events/s stored', {
    runs_events_s: runs.off.map((r) => Math.round(r.storedPerSecond)).join('/'),
    p99_ms: Math.round(off.load.latency.p99 * 10) / 10,
  });
  const onRow = versus(
    SUITE,
    'batched ingest, Redis rate limiter on',
    on.storedPerSecond,
    'events/s stored',
    offRow,
    0.9,
    {
      runs_events_s: runs.redis.map((r) => Math.round(r.storedPerSecond)).join('/'),
      p99_ms: Math.round(on.load.latency.p99 * 10) / 10,
    },
  );
  return [offRow, onRow];
}
