import { timeTickLabels } from '../../../src/console/web/format';
import { keyRequestFor } from '../../../src/console/web/key-refusal';

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Epoch ms of a local time (labels are in the browser's zone). */
const at = (day: number, hour: number, minute = 0, second = 0): number =>
  new Date(2026, 11, day, hour, minute, second).getTime();

describe('time axis labels', () => {
  it('an hour in steps of minutes: hours and minutes, no seconds', () => {
    expect(timeTickLabels([at(6, 20, 40), at(6, 20, 45)], 5 * MIN, HOUR)).toEqual(['20:40', '20:45']);
  });

  it('steps under a minute show seconds', () => {
    expect(timeTickLabels([at(6, 9, 0, 0), at(6, 9, 0, 30)], 30_000, 15 * MIN)).toEqual([
      '09:00:00',
      '09:00:30',
    ]);
  });

  it('a day or more in steps of hours: the date on the first tick of each day', () => {
    const ticks = [at(5, 22), at(6, 0), at(6, 2)];
    expect(timeTickLabels(ticks, 2 * HOUR, DAY)).toEqual(['12-05 22:00', '12-06 00:00', '02:00']);
  });

  it('steps of a day or more: dates', () => {
    expect(timeTickLabels([at(1, 0), at(2, 0)], DAY, 30 * DAY)).toEqual(['12-01', '12-02']);
  });
});

describe('why the console asks for a read key', () => {
  it('tells an ingest key from a key that is no read key of this collector', () => {
    expect(keyRequestFor(null)).toBe('none');
    expect(keyRequestFor('sk_in_abc')).toBe('ingest_key');
    expect(keyRequestFor('sk_rd_mistyped')).toBe('not_valid');
    expect(keyRequestFor('hello')).toBe('not_valid');
  });
});
