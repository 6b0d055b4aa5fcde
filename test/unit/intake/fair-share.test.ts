import { maxMinLevel } from '../../../src/intake/fair-share';

describe('maxMinLevel', () => {
  it('is Infinity while the demands fit together, or with nothing to share', () => {
    expect(maxMinLevel(100, [10, 20, 70])).toBe(Infinity);
    expect(maxMinLevel(100, [])).toBe(Infinity);
    expect(maxMinLevel(0, [500])).toBe(Infinity);
  });

  it('meets the small demands whole and splits the rest evenly among the large ones', () => {
    expect(maxMinLevel(100, [10, 10, 500])).toBe(80);
    expect(maxMinLevel(100, [500, 10, 400, 10])).toBe(40);
    expect(maxMinLevel(90, [100, 100, 100])).toBe(30);
  });

  it('gives out exactly the capacity', () => {
    const demands = [3, 7, 50, 200, 1000];
    const level = maxMinLevel(120, demands);
    expect(demands.reduce((sum, d) => sum + Math.min(d, level), 0)).toBeCloseTo(120);
  });
});
