import { EventLoopLag } from '../../../src/intake/event-loop-lag';
import { busy } from '../../support/busy';

async function ticks(n: number, tickMs: number): Promise<void> {
  await new Promise((r) => setTimeout(r, n * tickMs));
}

describe('EventLoopLag', () => {
  it('reads 0 while stopped and low while the loop is free', async () => {
    const lag = new EventLoopLag({ tickMs: 5, windowMs: 100 });
    expect(lag.standingMs()).toBe(0);
    lag.start();
    await ticks(10, 5);
    expect(lag.standingMs()).toBeLessThan(5);
    lag.stop();
    expect(lag.standingMs()).toBe(0);
  });

  it('rises while the loop stays busy, and falls once the backlog is gone', async () => {
    const lag = new EventLoopLag({ tickMs: 5, windowMs: 100 });
    lag.start();
    try {
      for (let i = 0; i < 5; i++) {
        busy(30);
        await new Promise((r) => setImmediate(r));
      }
      expect(lag.standingMs()).toBeGreaterThan(10);
      // A loop blocked for a whole window reads as at least that long.
      busy(150);
      expect(lag.standingMs()).toBeGreaterThanOrEqual(100);
      const deadline = Date.now() + 5000;
      while (lag.standingMs() >= 5 && Date.now() < deadline) await ticks(4, 5);
      expect(lag.standingMs()).toBeLessThan(5);
    } finally {
      lag.stop();
    }
  });
});
