import { EventLoopLag } from '../../../src/intake/event-loop-lag';
import { busy } from '../../support/busy';
import { waitFor } from '../../support/http';

describe('EventLoopLag', () => {
  it('reads 0 while stopped and low while the loop is free', async () => {
    const lag = new EventLoopLag({ tickMs: 5, windowMs: 100 });
    expect(lag.standingMs()).toBe(0);
    lag.start();
    const firstTick = lag.ticks;
    // The probe has sampled a free loop for two windows (on a busy box, until it reads low).
    await waitFor(
      'ten probe ticks and a low reading',
      () => lag.ticks >= firstTick + 10 && lag.standingMs() < 5,
      5000,
    );
    expect(lag.ticks).toBeGreaterThanOrEqual(firstTick + 10);
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
      await waitFor('the lag to fall once the loop is free', () => lag.standingMs() < 5, 5000);
    } finally {
      lag.stop();
    }
  });
});
