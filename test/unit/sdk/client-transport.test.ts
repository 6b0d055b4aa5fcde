import type { Transport, TransportRequest } from '../../../sdk/src/transport';
import { accepted, FakeClock, settle, status, throttleAll, throttled, type Answer } from './fakes';
import { harness, watchUnhandledRejections } from './harness';

const unhandled = watchUnhandledRejections();
afterEach(() => expect(unhandled).toEqual([]));

describe('client: batching', () => {
  it('sends a full batch at once, a partial one after flushIntervalMs', async () => {
    const { client, clock, transport } = harness({ batchSize: 3, flushIntervalMs: 1000 });
    client.lifecycle('a.one');
    client.lifecycle('a.two');
    await clock.advance(999);
    expect(transport.requests).toHaveLength(0);
    await clock.advance(1);
    expect(transport.requests.map((r) => r.events.length)).toEqual([2]);
    for (let i = 0; i < 3; i++) client.lifecycle('a.three');
    await clock.advance(0);
    expect(transport.requests.map((r) => r.events.length)).toEqual([2, 3]);
  });

  it('drains a backlog back to back, errors first', async () => {
    const { client, clock, transport } = harness({ batchSize: 2, flushIntervalMs: 1000 });
    client.metric('m', 1);
    client.log('l', 'x');
    client.error('e');
    client.lifecycle('c');
    client.error('e2');
    await clock.advance(0);
    expect(transport.requests.map((r) => r.events.map((e) => e.type))).toEqual([
      ['error', 'error'],
      ['lifecycle', 'log'],
      ['metric'],
    ]);
  });

  it('flush() sends what is buffered and resolves when it has left', async () => {
    const { client, transport } = harness({ batchSize: 100, flushIntervalMs: 60_000 });
    client.log('app.log', 'one');
    client.log('app.log', 'two');
    await client.flush();
    expect(transport.requests).toHaveLength(1);
    expect(client.stats()).toMatchObject({ sent: 2, buffered: { total: 0 } });
  });
});

describe('client: Retry-After and backoff', () => {
  it('sends nothing before Retry-After (429)', async () => {
    const { client, clock, transport } = harness();
    const t0 = clock.now();
    transport.answer(throttleAll('3'));
    client.error(new Error('boom'));
    await clock.advance(0);
    expect(client.stats().retryAt).toBe(t0 + 3000);
    client.error(new Error('more'));
    await clock.advance(2999);
    expect(transport.requests).toHaveLength(1);
    await clock.advance(1);
    expect(transport.requests).toHaveLength(3);
    expect(transport.requests[1]!.at).toBe(t0 + 3000);
    expect(client.stats().retryAt).toBeNull();
  });

  it('sends nothing before Retry-After (503), HTTP-date form too', async () => {
    const { client, clock, transport } = harness();
    const t0 = clock.now();
    transport.answer(status(503, '2'), status(503, new Date(t0 + 7000).toUTCString()));
    client.lifecycle('app.started');
    await clock.advance(1999);
    expect(transport.requests).toHaveLength(1);
    await clock.advance(1);
    expect(transport.requests).toHaveLength(2);
    await clock.advance(4999); // t0 + 6999
    expect(transport.requests).toHaveLength(2);
    await clock.advance(1);
    expect(transport.requests).toHaveLength(3);
  });

  it('backs off exponentially with full jitter, capped, on network errors and 5xx', async () => {
    const { client, clock, transport } = harness({
      random: () => 0.999999,
      retry: { baseMs: 100, maxMs: 1000 },
    });
    transport.answer(
      new Error('down'),
      status(500),
      new Error('down'),
      status(502),
      new Error('down'),
      status(504),
    );
    client.error('x');
    await clock.advance(10_000);
    const at = transport.requests.map((r) => r.at);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    expect(gaps).toEqual([99, 199, 399, 799, 999, 999]);
    expect(client.stats()).toMatchObject({
      sent: 1,
      consecutiveFailures: 0,
      requests: { failed: 6, succeeded: 1 },
    });
  });

  it('the jitter draws below the ceiling', async () => {
    const { client, clock, transport } = harness({ random: () => 0.25 });
    transport.answer(new Error('down'), new Error('down'));
    client.error('x');
    await clock.advance(10_000);
    const at = transport.requests.map((r) => r.at);
    expect([at[1]! - at[0]!, at[2]! - at[1]!]).toEqual([25, 50]);
  });
});

describe('client: partial answers', () => {
  it('on 429 resends only the throttled indices, drops the rejected ones', async () => {
    const { client, clock, transport } = harness({ batchSize: 5 });
    for (let i = 0; i < 5; i++) client.metric(`m${i}`, i);
    transport.answer(throttled(5, [1, 3], '1', [4]));
    await clock.advance(0);
    const first = transport.requests[0]!.events;
    expect(client.stats()).toMatchObject({ sent: 2, dropped: { rejected: 1 }, buffered: { total: 2 } });
    await clock.advance(1000);
    expect(transport.requests[1]!.events).toEqual([first[1], first[3]]);
    expect(client.stats()).toMatchObject({ sent: 4, dropped: { rejected: 1 }, buffered: { total: 0 } });
  });

  it('on 202 with rejected indices counts them as dropped', async () => {
    const { client, clock, transport } = harness({ batchSize: 3 });
    transport.answer(accepted(3, [0, 2]));
    for (let i = 0; i < 3; i++) client.lifecycle('app.x');
    await clock.advance(0);
    expect(client.stats()).toMatchObject({ sent: 1, dropped: { rejected: 2 } });
  });

  it('on 4xx other than 429 drops the batch, counted, without backing off', async () => {
    const { client, clock, transport } = harness({ batchSize: 2 });
    transport.answer(status(400), status(413), status(415));
    for (let i = 0; i < 8; i++) client.log('app.log', `line ${i}`);
    await clock.advance(0);
    expect(transport.requests.map((r) => r.at)).toEqual([clock.now(), clock.now(), clock.now(), clock.now()]);
    expect(client.stats()).toMatchObject({ sent: 2, dropped: { client_error: 6 }, retryAt: null });
  });

  it('keeps every event id and ts unchanged across retries', async () => {
    const { client, clock, transport } = harness({ batchSize: 3 });
    transport.answer(new Error('down'), status(503, '1'), throttleAll('1'));
    client.error(new Error('a'));
    client.metric('m', 1);
    clock.advance(5); // capture at different times
    client.log('l', 'x');
    await clock.advance(10_000);
    const sent = transport.sentEvents;
    const first = new Map(transport.requests[0]!.events.map((e) => [e.id, e]));
    expect(first.size).toBe(3);
    expect(sent).toHaveLength(12); // 4 attempts of each event
    for (const e of sent) expect(e).toEqual(first.get(e.id)); // same id, same ts, same everything
    expect(client.stats()).toMatchObject({ sent: 3, buffered: { total: 0 } });
  });
});

describe('client: a collector that admits part of a request', () => {
  /**
   * A fake collector with a per-second budget: each request takes what the budget still allows,
   * in request order, and throttles the rest with `Retry-After` = when the budget frees.
   */
  function budgeted(clock: FakeClock, perSecond: number): (req: TransportRequest) => Answer {
    let windowStart = -Infinity;
    let used = 0;
    return (req) => {
      const now = clock.now();
      if (now - windowStart >= 1000) {
        windowStart = Math.floor(now / 1000) * 1000;
        used = 0;
      }
      const take = Math.min(perSecond - used, req.events.length);
      used += take;
      if (take === req.events.length) return accepted(take);
      const rest = req.events.map((_, i) => i).slice(take);
      return throttled(req.events.length, rest, String(Math.ceil((windowStart + 1000 - now) / 1000)));
    };
  }

  it('keeps full batches and makes progress at the budget, waiting Retry-After only', async () => {
    const clock = new FakeClock(Date.UTC(2025, 5, 1, 12, 0, 0));
    const { client, transport } = harness({ batchSize: 10, flushIntervalMs: 1000 }, clock);
    transport.answerAlways(budgeted(clock, 6));
    const t0 = clock.now();
    for (let i = 0; i < 40; i++) client.lifecycle('app.tick', { seq: i });
    await clock.advance(20_000);

    // No shrinking: each request carries a full batch, or all that is left.
    const sizes = transport.requests.map((r) => r.events.length);
    expect(sizes).toEqual([10, 10, 10, 10, 10, 10, 4]);
    // One request per budget window: every wait is Retry-After, never a growing backoff.
    expect(transport.requests.map((r) => r.at - t0)).toEqual([0, 1000, 2000, 3000, 4000, 5000, 6000]);
    // Every event taken exactly once, in capture order.
    const taken = transport.requests.flatMap((r) => r.events.slice(0, 6).map((e) => e.attributes?.seq));
    expect(taken).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(client.stats()).toMatchObject({ sent: 40, buffered: { total: 0 }, consecutiveFailures: 0 });
  });

  it('backs off exponentially only while 429s take nothing; a 429 that took some resets the backoff', async () => {
    const { client, clock, transport } = harness({ batchSize: 2, random: () => 0.999999 });
    transport.answer(
      throttleAll('0'),
      throttleAll('0'),
      throttleAll('0'),
      throttled(2, [1], '0'), // took one event: progress
      throttleAll('0'),
    );
    client.lifecycle('app.one');
    client.lifecycle('app.two');
    await clock.advance(10_000);
    const at = transport.requests.map((r) => r.at);
    expect(at.slice(1).map((t, i) => t - at[i]!)).toEqual([99, 199, 399, 99, 99]);
    expect(client.stats()).toMatchObject({
      sent: 2,
      consecutiveFailures: 0,
      requests: { throttled: 5, succeeded: 1 },
    });
  });
});

describe('client: never throws into the host', () => {
  const broken: [string, Transport][] = [
    [
      'throws synchronously',
      {
        send: () => {
          throw new Error('sync boom');
        },
      },
    ],
    ['rejects', { send: () => Promise.reject(new Error('async boom')) }],
    ['answers nonsense', { send: () => Promise.resolve(null as never) }],
    ['rejects with a non-error', { send: () => Promise.reject(undefined) }],
  ];

  it.each(broken)('survives a transport that %s, and keeps the events to retry', async (_, transport) => {
    const clock = new FakeClock();
    const { client } = harness({ transport }, clock);
    expect(() => client.error(new Error('x'))).not.toThrow();
    await clock.advance(5000);
    await expect(client.flush({ timeoutMs: 0 })).resolves.toBeUndefined();
    const s = client.stats();
    expect(s.buffered.error + s.inFlight).toBe(1);
    expect(s.requests.failed).toBeGreaterThan(1);
    const closing = client.close({ timeoutMs: 100 });
    await clock.advance(100);
    await expect(closing).resolves.toBeUndefined();
  });

  it('survives hostile arguments and a broken clock and random', async () => {
    const { client, clock } = harness();
    const hostile = {
      get boom(): string {
        throw new Error('getter');
      },
    };
    const noString = Object.create(null) as object;
    expect(() => {
      client.metric('m', NaN);
      client.metric('m', 'x' as never);
      client.metric(undefined as never, 1);
      client.metric('bad name!', 1);
      client.log('l', noString as never);
      client.log(42 as never, 'x');
      client.lifecycle('c', hostile as never);
      client.error(noString);
      client.error(null);
      client.error(undefined, [1, 2] as never);
      client.error({ message: 5, name: {}, stack: 1 });
    }).not.toThrow();
    await clock.advance(1000);
    expect(client.stats().dropped.invalid).toBe(5);

    const bad = harness({
      clock: {
        now: () => {
          throw new Error('clock');
        },
        setTimeout: () => 0,
        clearTimeout: () => {},
      },
      random: () => {
        throw new Error('random');
      },
    });
    expect(() => bad.client.metric('m', 1)).not.toThrow();
    expect(() => bad.client.error('x')).not.toThrow();
    await expect(bad.client.flush()).resolves.toBeUndefined();
    await expect(bad.client.close()).resolves.toBeUndefined();
    expect(bad.client.stats().internalErrors).toBeGreaterThan(0);
  });

  it('does not throw on options that cannot work, and says why', () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
    const client = harness({ app: '', onError: undefined }).client;
    expect(() => client.error('x')).not.toThrow();
    expect(client.stats().disabled).toMatch(/app/);
    expect(warn).toHaveBeenCalled();
    warn.mockRestore();
  });
});

describe('client: flush and close', () => {
  it('flush() waits for Retry-After, then resolves after the attempt', async () => {
    const { client, clock, transport } = harness({ batchSize: 10 });
    transport.answer(throttleAll('2'));
    client.error('x');
    await clock.advance(0);
    let done = false;
    void client.flush().then(() => (done = true));
    await clock.advance(1999);
    expect(done).toBe(false);
    expect(transport.requests).toHaveLength(1);
    await clock.advance(1);
    expect(done).toBe(true);
    expect(transport.requests).toHaveLength(2);
  });

  it('flush() retries through failures and 429s until everything has left', async () => {
    const { client, clock, transport } = harness({ batchSize: 10 });
    transport.answer(new Error('down'), status(503, '1'), throttleAll('2'));
    client.error('x');
    client.lifecycle('app.started');
    let done = false;
    void client.flush({ timeoutMs: 60_000 }).then(() => (done = true));
    await clock.advance(2999);
    expect(done).toBe(false);
    expect(transport.requests).toHaveLength(3);
    await clock.advance(1000);
    expect(done).toBe(true);
    expect(transport.requests).toHaveLength(4);
    expect(client.stats()).toMatchObject({ sent: 2, buffered: { total: 0 }, inFlight: 0 });
  });

  it('flush() resolves at its deadline (default 30 s), leaving the rest buffered', async () => {
    const { client, clock, transport } = harness({ batchSize: 10 });
    transport.answerAlways(() => status(503, '1'));
    client.error('x');
    let done = false;
    void client.flush().then(() => (done = true));
    await clock.advance(29_999);
    expect(done).toBe(false);
    await clock.advance(1);
    expect(done).toBe(true);
    expect(client.stats().buffered.error).toBe(1);
  });

  it('keeps the process alive while a flush() is pending, and only then', async () => {
    const { client, clock, transport } = harness({ batchSize: 10, flushIntervalMs: 5000 });
    transport.answer(throttleAll('2'));
    client.error('x');
    expect(clock.pendingTimers).toBe(1); // the batch waits for its interval…
    expect(clock.keepAliveTimers).toBe(0); // …without holding the process
    let done = false;
    void client.flush({ timeoutMs: 40_000 }).then(() => (done = true));
    await clock.advance(0); // sent at once, answered 429: Retry-After 2 s
    expect(transport.requests).toHaveLength(1);
    expect(clock.keepAliveTimers).toBe(1);
    await clock.advance(1999);
    expect(clock.keepAliveTimers).toBe(1);
    await clock.advance(1);
    expect(done).toBe(true);
    expect(clock.pendingTimers).toBe(0); // nothing left to do: no timer at all

    transport.answer(throttleAll('2'));
    client.error('y');
    await clock.advance(5000); // sent on its interval, throttled: the retry timer does not hold the process
    expect(transport.requests).toHaveLength(3);
    expect(client.stats().retryAt).not.toBeNull();
    expect(clock.pendingTimers).toBe(1);
    expect(clock.keepAliveTimers).toBe(0);
  });

  it('close() retries until the deadline, drops later captures, leaves no timer', async () => {
    const { client, clock, transport } = harness({ batchSize: 10, flushIntervalMs: 60_000 });
    transport.answer(status(503, '1'));
    client.error('x');
    client.metric('m', 1);
    const closed = client.close({ timeoutMs: 3000 });
    client.error('late');
    await clock.advance(1000);
    await closed;
    expect(transport.requests).toHaveLength(2);
    expect(client.stats()).toMatchObject({ sent: 2, dropped: { closed: 1 } });
    expect(clock.pendingTimers).toBe(0);
    await expect(client.close()).resolves.toBeUndefined();
  });

  it('close() gives up at its deadline', async () => {
    const { client, clock, transport } = harness({ batchSize: 10 });
    transport.answerAlways(() => status(503, '10'));
    client.error('x');
    const closed = client.close({ timeoutMs: 3000 });
    let done = false;
    void closed.then(() => (done = true));
    await clock.advance(2999);
    expect(done).toBe(false);
    expect(clock.keepAliveTimers).toBe(1); // in Node, the process waits for close()
    await clock.advance(1);
    await settle();
    expect(done).toBe(true);
    expect(transport.requests).toHaveLength(1);
    expect(client.stats().buffered.error).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });
});
