import { AppBound } from '../../../src/intake/app-bound';

const MINUTE = 60_000;

describe('the bound on distinct apps per minute', () => {
  it('takes the first N apps of a minute and refuses others; each app taken stays taken that minute', () => {
    const bound = new AppBound(3);
    const t = 10 * MINUTE;
    expect(['a', 'b', 'c', 'd', 'a', 'e', 'c'].map((app) => bound.admits(app, t))).toEqual([
      true,
      true,
      true,
      false,
      true,
      false,
      true,
    ]);
    expect(bound.admittedIn(t)).toBe(3);
  });

  it('always takes the apps of the minute before, whatever new names come first', () => {
    const bound = new AppBound(3);
    for (const app of ['a', 'b', 'c']) expect(bound.admits(app, 10 * MINUTE)).toBe(true);
    // A flood of new names at the start of the next minute: no room, the old apps still come back.
    for (let i = 0; i < 100; i++) expect(bound.admits(`x${i}`, 11 * MINUTE)).toBe(false);
    for (const app of ['c', 'a', 'b']) expect(bound.admits(app, 11 * MINUTE + 1)).toBe(true);
  });

  it('lets a new app in once an old one has gone quiet for a minute', () => {
    const bound = new AppBound(2);
    expect(bound.admits('a', 0) && bound.admits('b', 0)).toBe(true);
    // Minute 1: only a sends; b keeps its room for this minute.
    expect(bound.admits('a', MINUTE)).toBe(true);
    expect(bound.admits('new', MINUTE)).toBe(false);
    // Minute 2: b was quiet in minute 1, so its room is free.
    expect(bound.admits('new', 2 * MINUTE)).toBe(true);
    expect(bound.admits('b', 2 * MINUTE)).toBe(false);
    // After a gap of more than a minute, every app starts afresh.
    expect(bound.admits('b', 10 * MINUTE)).toBe(true);
  });

  it('holds at most N distinct apps in any minute, and remembers at most 2N names', () => {
    const bound = new AppBound(50);
    for (let minute = 0; minute < 20; minute++) {
      const taken = new Set<string>();
      for (let i = 0; i < 500; i++) {
        const t = minute * MINUTE + i;
        const app = `m${minute % 3}-${i % 120}`;
        if (bound.admits(app, t)) taken.add(app);
      }
      expect(taken.size).toBeLessThanOrEqual(50);
    }
  });

  it('takes everything when the bound is 0', () => {
    const bound = new AppBound(0);
    for (let i = 0; i < 10_000; i++) expect(bound.admits(`a${i}`, 0)).toBe(true);
  });
});
