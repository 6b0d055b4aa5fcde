import {
  backoffDelay,
  classify,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  retryDelay,
} from '../../../sdk/src/retry';

const NOW = Date.UTC(2025, 5, 1, 12, 0, 0);

describe('parseRetryAfter', () => {
  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('3', NOW)).toBe(3000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
    expect(parseRetryAfter('1.5', NOW)).toBe(1500);
    expect(parseRetryAfter(new Date(NOW + 7000).toUTCString(), NOW)).toBe(7000);
    expect(parseRetryAfter(new Date(NOW - 7000).toUTCString(), NOW)).toBe(0);
  });

  it('ignores what it cannot read, and caps what it can', () => {
    expect(parseRetryAfter(null, NOW)).toBeUndefined();
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter('soon', NOW)).toBeUndefined();
    expect(parseRetryAfter('-1', NOW)).toBeUndefined();
    expect(parseRetryAfter('999999', NOW)).toBe(MAX_RETRY_AFTER_MS);
  });
});

describe('backoffDelay (capped exponential, full jitter)', () => {
  const opts = { baseMs: 100, maxMs: 1000 };

  it('draws from [0, base·2^(attempt-1)), capped at maxMs', () => {
    const top = () => 0.999999;
    expect(backoffDelay(1, opts, top)).toBe(99);
    expect(backoffDelay(2, opts, top)).toBe(199);
    expect(backoffDelay(3, opts, top)).toBe(399);
    expect(backoffDelay(4, opts, top)).toBe(799);
    expect(backoffDelay(5, opts, top)).toBe(999);
    expect(backoffDelay(60, opts, top)).toBe(999);
    expect(backoffDelay(3, opts, () => 0)).toBe(0);
    expect(backoffDelay(3, opts, () => 0.5)).toBe(200);
  });

  it('never waits less than Retry-After', () => {
    expect(retryDelay(1, 5000, opts, () => 0.999)).toBe(5000);
    expect(retryDelay(5, 10, opts, () => 0.5)).toBe(500);
    expect(retryDelay(1, undefined, opts, () => 0.5)).toBe(50);
  });
});

describe('classify', () => {
  it('2xx: accepted, with rejected indices', () => {
    expect(
      classify({ status: 202, body: { accepted: 2, rejected: [{ index: 1, reason: 'x' }] } }, 3, NOW),
    ).toEqual({
      kind: 'accepted',
      rejected: [1],
      unconfirmed: false,
    });
    expect(classify({ status: 200 }, 3, NOW)).toMatchObject({ kind: 'accepted', rejected: [] });
  });

  it('422 events_rejected: every event rejected (dropped, never resent); another 422 is a failure', () => {
    const body = { accepted: 0, rejected: [{ index: 0, reason: 'x' }], error: 'events_rejected' };
    expect(classify({ status: 422, body }, 3, NOW)).toEqual({
      kind: 'accepted',
      rejected: [0, 1, 2],
      unconfirmed: false,
    });
    expect(classify({ status: 422, body: { error: 'other' } }, 3, NOW)).toEqual({
      kind: 'failed',
      status: 422,
    });
  });

  it('429: throttled indices, rejected indices (never both), Retry-After', () => {
    const body = { accepted: 1, rejected: [{ index: 0, reason: 'x' }], throttled: [0, 2, 3, 9, 'x', 2.5] };
    expect(classify({ status: 429, retryAfter: '2', body }, 4, NOW)).toEqual({
      kind: 'throttled',
      rejected: [0],
      throttled: [2, 3],
      retryAfterMs: 2000,
      unread: false,
    });
  });

  it('429 without a throttled list: every event not rejected is throttled', () => {
    expect(classify({ status: 429, body: 'not json' }, 3, NOW)).toEqual({
      kind: 'throttled',
      rejected: [],
      throttled: [0, 1, 2],
      retryAfterMs: undefined,
      unread: false,
    });
    // The collector's answer to a request it refused unread while saturated.
    const overloaded = { accepted: 0, rejected: [], error: 'overloaded', message: 'Collector is saturated' };
    expect(classify({ status: 429, retryAfter: '2', body: overloaded }, 3, NOW)).toEqual({
      kind: 'throttled',
      rejected: [],
      throttled: [0, 1, 2],
      retryAfterMs: 2000,
      unread: true,
    });
  });

  it('network error, 408, 5xx: retryable; other 4xx: failed', () => {
    expect(classify(undefined, 1, NOW)).toEqual({ kind: 'retryable', retryAfterMs: undefined });
    expect(classify({ status: 503, retryAfter: '4' }, 1, NOW)).toEqual({
      kind: 'retryable',
      retryAfterMs: 4000,
    });
    expect(classify({ status: 500 }, 1, NOW).kind).toBe('retryable');
    expect(classify({ status: 408 }, 1, NOW).kind).toBe('retryable');
    for (const s of [400, 401, 403, 404, 413, 415])
      expect(classify({ status: s }, 1, NOW)).toEqual({ kind: 'failed', status: s });
  });
});
