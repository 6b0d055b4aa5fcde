import {
  RETRY_AFTER_MAX_S,
  RETRY_AFTER_MIN_S,
  clampRetryAfter,
  retryAfterFromMs,
  retryAfterToDrain,
} from '../../../src/intake/retry-after';

describe('Retry-After', () => {
  it('clamps every wait to whole seconds in [1, 30]', () => {
    expect(clampRetryAfter(0)).toBe(RETRY_AFTER_MIN_S);
    expect(clampRetryAfter(Number.NaN)).toBe(RETRY_AFTER_MIN_S);
    expect(clampRetryAfter(1.2)).toBe(2);
    expect(clampRetryAfter(1e9)).toBe(RETRY_AFTER_MAX_S);
    expect(retryAfterFromMs(1)).toBe(1);
    expect(retryAfterFromMs(2500)).toBe(3);
  });

  it('derives the time to drain from the consumer rate, the longest wait when nothing drains', () => {
    expect(retryAfterToDrain(100, 50)).toBe(2);
    expect(retryAfterToDrain(100, 1e6)).toBe(1);
    expect(retryAfterToDrain(100, 0)).toBe(30);
    expect(retryAfterToDrain(1e6, 1)).toBe(30);
  });
});
