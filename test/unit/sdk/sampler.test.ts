import { DynamicSampler } from '../../../sdk/src/sampler';

function successes(s: DynamicSampler, n: number): void {
  for (let i = 0; i < n; i++) s.onSuccess();
}

describe('DynamicSampler without advice: 429s that took nothing step 1 → 0.5 → 0.1', () => {
  it('starts at 1.0 and stays there on successes', () => {
    const s = new DynamicSampler(1);
    successes(s, 100);
    expect(s.rate).toBe(1);
  });

  it('1.0 → first 429 → 0.5', () => {
    const s = new DynamicSampler(1);
    s.onThrottled(0);
    expect(s.rate).toBe(0.5);
  });

  it('0.5 → 429 again → 0.1, and 0.1 stays 0.1 on more 429s', () => {
    const s = new DynamicSampler(1);
    s.onThrottled(0);
    s.onThrottled(0);
    expect(s.rate).toBe(0.1);
    s.onThrottled(0);
    expect(s.rate).toBe(0.1);
  });

  it('0.1 → 10 consecutive successes → 0.5 (not at 9)', () => {
    const s = new DynamicSampler(1);
    s.onThrottled(0);
    s.onThrottled(0);
    successes(s, 9);
    expect(s.rate).toBe(0.1);
    expect(s.streak).toBe(9);
    s.onSuccess();
    expect(s.rate).toBe(0.5);
    expect(s.streak).toBe(0);
  });

  it('0.5 → 30 consecutive successes → 1.0 (not at 29), counted from the step up', () => {
    const s = new DynamicSampler(1);
    s.onThrottled(0);
    s.onThrottled(0);
    successes(s, 10); // → 0.5, streak restarts
    successes(s, 29);
    expect(s.rate).toBe(0.5);
    s.onSuccess();
    expect(s.rate).toBe(1);
  });

  it('0.5 reached by one 429 → 30 consecutive successes → 1.0', () => {
    const s = new DynamicSampler(1);
    s.onThrottled(0);
    successes(s, 29);
    expect(s.rate).toBe(0.5);
    s.onSuccess();
    expect(s.rate).toBe(1);
  });

  it('a 429 resets the streak: successes must be consecutive', () => {
    const s = new DynamicSampler(1);
    s.onThrottled(0);
    s.onThrottled(0);
    successes(s, 9);
    s.onThrottled(0);
    successes(s, 9);
    expect(s.rate).toBe(0.1);
    s.onSuccess();
    expect(s.rate).toBe(0.5);
  });

  it('a 429 while stepping back up at 0.5 goes down to 0.1 again', () => {
    const s = new DynamicSampler(1);
    s.onThrottled(0);
    s.onThrottled(0);
    successes(s, 10);
    successes(s, 20);
    s.onThrottled(0);
    expect(s.rate).toBe(0.1);
    expect(s.streak).toBe(0);
  });

  it('other failures break the streak but leave the rate', () => {
    const s = new DynamicSampler(1);
    s.onThrottled(0);
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
    const s = new DynamicSampler(1);
    for (let i = 0; i < 50; i++) s.onFailure();
    expect(s.rate).toBe(1);
  });
});

describe('DynamicSampler: a 429 that took part of the batch is not "429 again"', () => {
  it('lowers the rate in proportion to what was refused', () => {
    const s = new DynamicSampler(1);
    s.onThrottled(0.8);
    expect(s.rate).toBeCloseTo(0.8);
    s.onThrottled(0.5);
    expect(s.rate).toBeCloseTo(0.4);
  });

  it('never below 0.1, and climbs back as the seed says', () => {
    const s = new DynamicSampler(1);
    for (let i = 0; i < 10; i++) s.onThrottled(0.2);
    expect(s.rate).toBeCloseTo(0.1);
    successes(s, 10);
    expect(s.rate).toBe(0.5);
    successes(s, 30);
    expect(s.rate).toBe(1);
  });

  it('from a rate between the levels, 30 successes bring it to 1', () => {
    const s = new DynamicSampler(1);
    s.onThrottled(0.7);
    successes(s, 29);
    expect(s.rate).toBeCloseTo(0.7);
    s.onSuccess();
    expect(s.rate).toBe(1);
  });
});

describe('DynamicSampler with advice', () => {
  it('follows each advice, down and up, whatever the streak', () => {
    const s = new DynamicSampler(1);
    s.onAdvice(0.333);
    expect(s.rate).toBe(0.333);
    s.onAdvice(0.5);
    expect(s.rate).toBe(0.5);
    s.onAdvice(1);
    expect(s.rate).toBe(1);
    expect(s.streak).toBe(0);
  });

  it('advice is a share of what the app captures: with a static rate of 0.5, advice 0.25 is a dynamic rate of 0.5', () => {
    const s = new DynamicSampler(0.5);
    s.onAdvice(0.25);
    expect(s.rate).toBe(0.5);
    s.onAdvice(0.8);
    expect(s.rate).toBe(1);
  });

  it('a collector that stops advising hands over to the steps', () => {
    const s = new DynamicSampler(1);
    s.onAdvice(0.2);
    successes(s, 10);
    expect(s.rate).toBe(0.5);
  });
});
