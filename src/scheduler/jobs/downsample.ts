import { OPEN_END_MS, ROLLUP_WIDTH_MS, floorTo } from '../../storage/layout/rollups';
import type { Job } from '../job';

const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];
const HOUR_MS = ROLLUP_WIDTH_MS['1h'];

/** Default most raw time one fold statement covers while catching up (milliseconds). */
export const DEFAULT_MAX_SPAN_MS = HOUR_MS;
/** Default most fold statements per run while catching up. */
export const DEFAULT_MAX_SPANS_PER_RUN = 6;

export interface DownsampleOptions {
  /**
   * `SLUICE_LATENESS_MS`: an event stored at most this long after its ts (on the database clock)
   * still reaches the rollups. Each run re-folds the buckets from watermark − lateness on.
   */
  readonly latenessMs: number;
  /**
   * Most raw time one fold statement covers when far behind (first run over old data, after
   * downtime), so each statement stays well within the statement timeout (milliseconds, a multiple
   * of one minute). Default 1 hour: about 1.3 s per million raw rows on PostgreSQL here.
   */
  readonly maxSpanMs?: number;
  /** Most spans one run folds; the next runs continue. Default 6 (6 hours of backlog per run). */
  readonly maxSpansPerRun?: number;
}

export interface FoldPlan {
  /** Source range to re-fold, [fromMs, toMs); null when there is nothing at all. */
  readonly fold: { readonly fromMs: number; readonly toMs: number } | null;
  /** Watermark to store once the fold is done. */
  readonly watermarkMs: number;
}

/**
 * What one run folds. Invariant: every 1m bucket before `watermark − lateness` was folded from the
 * raw rows as they were after their last event could still arrive on time.
 *
 * Proof sketch: an event with ts t committed at time a ≤ t + lateness, first seen by run r. The
 * run before r did not see it, so a > that run's `now` = r's watermark W; hence t ≥ a − lateness >
 * W − lateness ≥ r's `fromMs`, and r re-folds t's bucket.
 *
 * Caught up (within `maxSpanMs`), a run folds everything from `fromMs` on, including the open
 * bucket and events stamped slightly in the future, and stores `now` as the watermark; behind, it
 * folds one span and stores its end.
 */
export function planFold(
  watermark: number | null,
  oldestSample: number | null,
  now: number,
  latenessMs: number,
  maxSpanMs: number = DEFAULT_MAX_SPAN_MS,
): FoldPlan {
  const start = watermark === null ? oldestSample : watermark - latenessMs;
  if (start === null) return { fold: null, watermarkMs: now };
  const fromMs = floorTo(start, MINUTE_MS);
  const spanEnd = fromMs + maxSpanMs;
  if (spanEnd < now) return { fold: { fromMs, toMs: spanEnd }, watermarkMs: spanEnd };
  return { fold: { fromMs, toMs: OPEN_END_MS }, watermarkMs: now };
}

/**
 * Metric samples and SDK summaries → 1m rollups (from raw) → 1h rollups (from 1m), per (name, app),
 * incrementally from the watermark. Each fold recomputes whole buckets and replaces them, so a
 * second run over the same data changes nothing. The watermark is written last: a run that
 * stops half-way (SQLite) is simply redone.
 */
export function downsampleJob(options: DownsampleOptions): Job {
  const maxSpanMs = options.maxSpanMs ?? DEFAULT_MAX_SPAN_MS;
  const maxSpans = options.maxSpansPerRun ?? DEFAULT_MAX_SPANS_PER_RUN;
  if (maxSpanMs < MINUTE_MS || maxSpanMs % MINUTE_MS !== 0) {
    throw new Error(`downsample maxSpanMs must be a positive multiple of ${MINUTE_MS} ms`);
  }
  if (!Number.isSafeInteger(maxSpans) || maxSpans < 1)
    throw new Error('downsample maxSpansPerRun must be ≥ 1');
  return {
    name: 'downsample',
    async run({ now, session, signal }) {
      let watermark = await session.rollupWatermark();
      let oldest = watermark === null ? await session.oldestSampleTs() : null;
      let rows1m = 0;
      let rows1h = 0;
      let spans = 0;
      let plan: FoldPlan;
      do {
        plan = planFold(watermark, oldest, now, options.latenessMs, maxSpanMs);
        if (plan.fold !== null) {
          const { fromMs, toMs } = plan.fold;
          rows1m += await session.foldRollups('1m', fromMs, toMs);
          // The hours touching the re-folded minutes, from their (now final) 1m rows.
          rows1h += await session.foldRollups('1h', floorTo(fromMs, HOUR_MS), toMs);
        }
        watermark = plan.watermarkMs;
        oldest = null;
        spans++;
        signal.throwIfAborted();
      } while (plan.watermarkMs !== now && spans < maxSpans);
      await session.setRollupWatermark(plan.watermarkMs);
      return {
        rows: rows1m + rows1h,
        detail: { rows1m, rows1h, spans, watermarkMs: plan.watermarkMs, caughtUp: plan.watermarkMs === now },
      };
    },
  };
}
