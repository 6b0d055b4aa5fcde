import { Writable } from 'node:stream';
import { createLogger } from '../../../src/log/logger';
import { keepTrying } from '../../../src/lifecycle/startup';

/** A logger whose lines the test reads. */
function capturedLogger() {
  const lines: Array<{ level: string; msg: string; attempts?: number }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as (typeof lines)[number]);
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

/** A step failing `n` times with `reason(i)`, then resolving 'ok'. */
function failing(n: number, reason: (i: number) => string = () => 'connection refused') {
  let calls = 0;
  return {
    step: async () => {
      calls++;
      if (calls <= n) throw new Error(reason(calls));
      return 'ok';
    },
    calls: () => calls,
  };
}

describe('keepTrying', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  async function settle<T>(p: Promise<T>): Promise<T> {
    let done = false;
    void p.finally(() => (done = true));
    while (!done) await jest.advanceTimersByTimeAsync(500);
    return p;
  }

  it('retries until the step succeeds, logging a long outage a few times, not per attempt', async () => {
    const { logger, lines } = capturedLogger();
    const s = failing(60);
    const result = await settle(
      keepTrying('connect to NATS', s.step, { logger, signal: new AbortController().signal }),
    );
    await new Promise((r) => setImmediate(r));
    expect(result).toBe('ok');
    expect(s.calls()).toBe(61);
    const warnings = lines.filter((l) => l.level === 'warn');
    // 60 failures over about 2.5 minutes: the first, then one per 30 s.
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    expect(warnings.length).toBeLessThanOrEqual(7);
    expect(warnings[0]?.msg).toBe('connect to NATS failed; retrying: connection refused');
    expect(lines.at(-1)).toMatchObject({ level: 'info', msg: 'connect to NATS: done', attempts: 61 });
  });

  it('logs again at once when the reason changes', async () => {
    const { logger, lines } = capturedLogger();
    const s = failing(4, (i) => (i <= 2 ? 'timeout' : 'no suitable peers'));
    await settle(keepTrying('create the stream', s.step, { logger, signal: new AbortController().signal }));
    await new Promise((r) => setImmediate(r));
    expect(lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      'create the stream failed; retrying: timeout',
      'create the stream failed; retrying: no suitable peers',
    ]);
  });

  it('rethrows an error marked fatal, and resolves null once aborted', async () => {
    const { logger } = capturedLogger();
    const fatal = keepTrying('x', failing(5).step, {
      logger,
      signal: new AbortController().signal,
      fatal: () => true,
    });
    await expect(fatal).rejects.toThrow('connection refused');

    const abort = new AbortController();
    const s = failing(1_000);
    const stopped = keepTrying('x', s.step, { logger, signal: abort.signal });
    await jest.advanceTimersByTimeAsync(1000);
    abort.abort();
    expect(await stopped).toBeNull();
    const calls = s.calls();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(s.calls()).toBe(calls);
  });
});
