import { DynamicSampler } from '../../../sdk/src/sampler';

function successes(s: DynamicSampler, n: number): void {
  for (let i = 0; i < n; i++) s.onSuccess();
}

describe('DynamicSampler (docs/ARCHITECTURE.md: dynamic sampling driven by 429 only)', () => {
  it('starts at 1.0 and stays there on successes', () => {
    const s = new DynamicSampler();
    successes(s, 100);
    expect(s.rate).toBe(1);
  });

  it('1.0 → first 429 → 0.5', () => {
    const s = new DynamicSampler();
    s.onThrottled();
    expect(s.rate).toBe(0.5);
  });

  it('0.5 → 429 again → 0.1, and 0.1 stays 0.1 on more 429s', () => {
    const s = new DynamicSampler();
    s.onThrottled();
    s.onThrottled();
    expect(s.rate).toBe(0.1);
    s.onThrottled();
    expect(s.rate).toBe(0.1);
  });

  it('0.1 → 10 consecutive successes → 0.5 (not at 9)', () => {
    const s = new DynamicSampler();
    s.onThrottled();
    s.onThrottled();
    successes(s, 9);
    expect(s.rate).toBe(0.1);
    expect(s.streak).toBe(9);
    s.onSuccess();
    expect(s.rate).toBe(0.5);
    expect(s.streak).toBe(0);
  });

  it('0.5 → 30 consecutive successes → 1.0 (not at 29), counted from the step up', () => {
    const s = new DynamicSampler();
    s.onThrottled();
    s.onThrottled();
    successes(s, 10); // → 0.5, streak restarts
    successes(s, 29);
    expect(s.rate).toBe(0.5);
    s.onSuccess();
    expect(s.rate).toBe(1);
  });

  it('0.5 reached by one 429 → 30 consecutive successes → 1.0', () => {
    const s = new DynamicSampler();
    s.onThrottled();
    successes(s, 29);
    expect(s.rate).toBe(0.5);
    s.onSuccess();
    expect(s.rate).toBe(1);
  });

  it('a 429 resets the streak: successes must be consecutive', () => {
    const s = new DynamicSampler();
    s.onThrottled();
    s.onThrottled();
    successes(s, 9);
    s.onThrottled();
    successes(s, 9);
    expect(s.rate).toBe(0.1);
    s.onSuccess();
    expect(s.rate).toBe(0.5);
  });

  it('a 429 while stepping back up at 0.5 goes down to 0.1 again', () => {
    const s = new DynamicSampler();
    s.onThrottled();
    s.onThrottled();
    successes(s, 10);
    successes(s, 20);
    s.onThrottled();
    expect(s.rate).toBe(0.1);
    expect(s.streak).toBe(0);
  });

  it('other failures break the streak but leave the rate', () => {
    const s = new DynamicSampler();
    s.onThrottled();
    successes(s, 29);
    s.onFailure();
    expect(s.rate).toBe(0.5);
    expect(s.streak).toBe(0);
    successes(s, 29);
    expect(s.rate).toBe(0.5);
    s.onSuccess();
    expect(s.rate).toBe(1);
  });

  it('failures alone never lower the rate', () => {
    const s = new DynamicSampler();
    for (let i = 0; i < 50; i++) s.onFailure();
    expect(s.rate).toBe(1);
  });
});
