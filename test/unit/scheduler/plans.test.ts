import { DEFAULT_MAX_SPAN_MS, downsampleJob, planFold } from '../../../src/scheduler/jobs/downsample';
import { purgeCutoffs } from '../../../src/scheduler/jobs/purge';
import { delayToNextSlot, lockRetryDelay, slotStart } from '../../../src/scheduler/slots';
import { parseDailyPartition } from '../../../src/storage/postgres/partitions';
import { OPEN_END_MS } from '../../../src/storage/layout/rollups';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
/** 2026-12-02T12:00:00Z */
const NOW = Date.UTC(2026, 11, 2, 12);

describe('interval windows', () => {
  it('a window is [k·I, (k+1)·I) of the clock', () => {
    expect(slotStart(1_000, 250)).toBe(1_000);
    expect(slotStart(1_249, 250)).toBe(1_000);
    expect(slotStart(1_250, 250)).toBe(1_250);
  });

  it('the next attempt is just after the next window starts, spread by at most a tenth of the interval', () => {
    expect(delayToNextSlot(1_000, 250, 0)).toBe(250 + 2);
    expect(delayToNextSlot(1_249, 250, 0)).toBe(1 + 2);
    expect(delayToNextSlot(1_000, 250, 0.999)).toBe(250 + 2 + 24);
    expect(delayToNextSlot(0, 3_600_000, 0.999)).toBeLessThan(3_600_000 + 36_000 + 1000);
  });

  it('retries a busy lock a few times per window, within bounds', () => {
    expect(lockRetryDelay(80)).toBe(20);
    expect(lockRetryDelay(300)).toBe(37);
    expect(lockRetryDelay(3_600_000)).toBe(5000);
  });
});

describe('planFold', () => {
  const L = 5 * MIN;

  it('first run with no data: nothing to fold, watermark at now', () => {
    expect(planFold(null, null, NOW, L)).toEqual({ fold: null, watermarkMs: NOW });
  });

  it('first run folds from the minute of the oldest sample', () => {
    expect(planFold(null, NOW - 10 * MIN - 7, NOW, L)).toEqual({
      fold: { fromMs: NOW - 11 * MIN, toMs: OPEN_END_MS },
      watermarkMs: NOW,
    });
  });

  it('later runs re-fold from watermark − lateness, rounded down to the minute', () => {
    expect(planFold(NOW - 30_000, null, NOW, L)).toEqual({
      fold: { fromMs: NOW - 6 * MIN, toMs: OPEN_END_MS },
      watermarkMs: NOW,
    });
    expect(planFold(NOW, null, NOW, 0).fold?.fromMs).toBe(NOW);
  });

  it('far behind, one span per run, each continuing where the last stopped', () => {
    const first = planFold(null, NOW - 3 * DAY, NOW, L, 6 * HOUR);
    expect(first).toEqual({
      fold: { fromMs: NOW - 3 * DAY, toMs: NOW - 3 * DAY + 6 * HOUR },
      watermarkMs: NOW - 3 * DAY + 6 * HOUR,
    });
    const second = planFold(first.watermarkMs, null, NOW, L, 6 * HOUR);
    expect(second.fold?.fromMs).toBe(first.watermarkMs - L);
    expect(DEFAULT_MAX_SPAN_MS).toBe(HOUR);
  });

  it('a watermark ahead of now (the clock stepped back) still re-folds, and follows the clock', () => {
    expect(planFold(NOW + HOUR, null, NOW, L)).toEqual({
      fold: { fromMs: NOW + HOUR - L, toMs: OPEN_END_MS },
      watermarkMs: NOW,
    });
  });

  it('rejects a span that would cut minutes', () => {
    expect(() => downsampleJob({ latenessMs: L, maxSpanMs: 90_000 })).toThrow(/multiple/);
    expect(() => downsampleJob({ latenessMs: L, maxSpanMs: 0 })).toThrow(/multiple/);
    expect(() => downsampleJob({ latenessMs: L, maxSpansPerRun: 0 })).toThrow(/maxSpansPerRun/);
  });
});

describe('purgeCutoffs', () => {
  it('raw: the UTC midnight starting the oldest day that still overlaps the retention; rollups: exact', () => {
    const now = Date.UTC(2026, 11, 20, 15, 30);
    expect(
      purgeCutoffs(now, { retentionRawMs: 7 * DAY, retention1mMs: 30 * DAY, retention1hMs: 400 * DAY }),
    ).toEqual({
      rawMs: Date.UTC(2026, 11, 13),
      rollup1mMs: now - 30 * DAY,
      rollup1hMs: now - 400 * DAY,
      runsMs: now - 7 * DAY,
    });
  });
});

describe('daily partition names', () => {
  it('parse back to their UTC day; anything else is not a daily partition', () => {
    expect(parseDailyPartition('metric_samples_p20261202')).toEqual({
      table: 'metric_samples',
      name: 'metric_samples_p20261202',
      from: Date.UTC(2026, 11, 2),
      to: Date.UTC(2026, 11, 3),
    });
    expect(parseDailyPartition('events_p20240229')?.from).toBe(Date.UTC(2024, 1, 29));
    for (const name of [
      'events_default',
      'events_p20261302',
      'events_p20230229',
      'other_p20261202',
      'events_p2026120',
    ]) {
      expect(parseDailyPartition(name)).toBeNull();
    }
  });
});
