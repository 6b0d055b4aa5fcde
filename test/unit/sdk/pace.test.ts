import { Pace } from '../../../sdk/src/pace';

describe('Pace', () => {
  it('paces nothing without advice below 1', () => {
    const p = new Pace();
    for (let i = 0; i < 300; i++) p.captured(i * 10);
    p.advised(undefined);
    p.sent(100, 3000);
    expect(p.nextAt()).toBe(-Infinity);
    p.advised(1);
    p.sent(100, 3000);
    expect(p.nextAt()).toBe(-Infinity);
  });

  it('spreads requests at the advised share of the capture rate, a quarter above', () => {
    const p = new Pace();
    // 300 captures a second for 10 s.
    for (let i = 0; i < 3000; i++) p.captured(Math.floor(i * (10_000 / 3000)));
    p.advised(1 / 3);
    p.sent(100, 10_000);
    // 100 events at 1.25 × 100/s: 0.8 s.
    expect(p.nextAt()).toBeCloseTo(10_800, -1);
  });

  it('stops pacing when the advice returns to 1', () => {
    const p = new Pace();
    for (let i = 0; i < 1000; i++) p.captured(i);
    p.advised(0.1);
    p.sent(100, 1000);
    expect(p.nextAt()).toBeGreaterThan(1000);
    p.advised(1);
    expect(p.nextAt()).toBe(-Infinity);
  });
});
