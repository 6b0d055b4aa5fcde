import { compactOutcomesJob, compactionRange } from '../../../src/scheduler/jobs/compact-outcomes';
import { downsampleJob, rawSourceBefore } from '../../../src/scheduler/jobs/downsample';
import { purgeCutoffs } from '../../../src/scheduler/jobs/purge';
import { delayToNextSlot, lockRetryDelay, slotStart } from '../../../src/scheduler/slots';
import { parseDailyPartition } from '../../../src/storage/postgres/partitions';

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

describe('downsample', () => {
  it('folds an hour from raw samples once its 1m rows may be purged, from 1m rows otherwise', () => {
    // 1m retention 30 d: the purge removes 1m rows whose bucket ends by now − 30 d.
    const line = rawSourceBefore(NOW, 30 * DAY);
    expect(line).toBe(NOW - 30 * DAY + 2 * HOUR);
    expect(line % HOUR).toBe(0);
    expect(rawSourceBefore(NOW + 59 * MIN, 30 * DAY)).toBe(line);
  });

  it('rejects bounds that would fold nothing', () => {
    expect(() => downsampleJob({ retention1mMs: DAY, maxEntriesPerFold: 0 })).toThrow(/maxEntriesPerFold/);
    expect(() => downsampleJob({ retention1mMs: DAY, maxFoldsPerRun: 0 })).toThrow(/maxFoldsPerRun/);
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

describe('compactionRange', () => {
  const o = { settleMs: 60_000, retentionRawMs: 7 * DAY };

  it('folds minutes that ended at least the settle age ago, down to the purge raw cutoff', () => {
    const now = Date.UTC(2026, 11, 20, 15, 30, 20);
    // 15:30 (current) and 15:29 (ended 20 s ago) are left alone; 15:28 ended 80 s ago.
    expect(compactionRange(now, o)).toEqual({
      fromMs: purgeCutoffs(now, { retentionRawMs: 7 * DAY, retention1mMs: DAY, retention1hMs: DAY }).rawMs,
      beforeMs: Date.UTC(2026, 11, 20, 15, 29),
    });
    // On a minute's edge, the minute that just ended is one settle age old only at its end.
    expect(compactionRange(Date.UTC(2026, 11, 20, 15, 30), o).beforeMs).toBe(Date.UTC(2026, 11, 20, 15, 29));
    // Settle 0: every minute that has ended; 5 minutes: the last five ended minutes stay too.
    expect(compactionRange(now, { ...o, settleMs: 0 }).beforeMs).toBe(Date.UTC(2026, 11, 20, 15, 30));
    expect(compactionRange(now, { ...o, settleMs: 5 * MIN }).beforeMs).toBe(Date.UTC(2026, 11, 20, 15, 25));
  });

  it('rejects bounds that would fold nothing or go forward in time', () => {
    expect(() => compactOutcomesJob({ ...o, maxRowsPerRun: 0 })).toThrow(/maxRowsPerRun/);
    expect(() => compactOutcomesJob({ ...o, maxRowsPerRun: 10, settleMs: -1 })).toThrow(/settleMs/);
  });
});

describe('daily partition names', () => {
  it('parse back to their UTC day; anything else is not a daily partition', () => {
    expect(parseDailyPartition('metric_blocks_p20261202')).toEqual({
      table: 'metric_blocks',
      name: 'metric_blocks_p20261202',
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
