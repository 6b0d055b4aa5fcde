import { IngestPrecedence } from '../../../src/storage/postgres/ingest-precedence';
import { StorageBusyError } from '../../../src/storage/storage-busy';

/**
 * The rules of ingest precedence on a fake clock; test/integration/ingest-precedence.test.ts runs
 * them on a collector with the defaults against PostgreSQL.
 */
const READ_MS = 20;

/** A read of `ms` on the fake clock that counts how many run at once. */
function reads(ms = READ_MS) {
  let running = 0;
  let most = 0;
  let done = 0;
  return {
    read: () =>
      new Promise<void>((resolve) => {
        running++;
        most = Math.max(most, running);
        setTimeout(() => {
          running--;
          done++;
          resolve();
        }, ms);
      }),
    get most() {
      return most;
    },
    get done() {
      return done;
    },
  };
}

function gate(share = 0.2, waitMs = 5000) {
  const deferred: number[] = [];
  let refused = 0;
  const p = new IngestPrecedence({
    share,
    waitMs,
    now: () => Date.now(),
    onDeferred: (ms) => deferred.push(ms),
    onRefused: () => void refused++,
  });
  return {
    p,
    deferred,
    get refused() {
      return refused;
    },
  };
}

/** A write held in flight for `ms`: the writer pressed once its busy share has followed. */
async function pressFor(p: IngestPrecedence, ms: number): Promise<void> {
  p.writeStarted();
  setTimeout(() => p.writeEnded(), ms);
  await jest.advanceTimersByTimeAsync(1000);
}

beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
afterEach(() => jest.useRealTimers());

describe('reads beside ingest', () => {
  it('with the writer idle, reads run at once and side by side', async () => {
    const g = gate();
    const r = reads();
    expect(g.p.pressed()).toBe(false);
    const all = Promise.all(Array.from({ length: 4 }, () => g.p.run(r.read)));
    await jest.advanceTimersByTimeAsync(READ_MS);
    await all;
    expect(r.most).toBe(4);
    expect(g.deferred).toEqual([]);
  });

  it('with the writer pressed, reads run one at a time and take at most their share of the time', async () => {
    const g = gate(0.2);
    await pressFor(g.p, 60_000);
    expect(g.p.pressed()).toBe(true);
    const r = reads();
    let stop = false;
    const loop = async (): Promise<void> => {
      while (!stop) await g.p.run(r.read);
    };
    // Eight readers looping for 10 s: the budget saved (at most 500 ms) plus a fifth of 10 s.
    const readers = Array.from({ length: 8 }, loop);
    await jest.advanceTimersByTimeAsync(10_000);
    stop = true;
    await jest.advanceTimersByTimeAsync(10_000);
    await Promise.all(readers);
    expect(r.most).toBe(1);
    const readMs = r.done * READ_MS;
    expect(readMs).toBeLessThanOrEqual(500 + 0.2 * 10_000 + 8 * READ_MS);
    expect(readMs).toBeGreaterThanOrEqual(0.2 * 10_000);
    expect(g.deferred.length).toBeGreaterThan(0);
    expect(g.refused).toBe(0);
  });

  it('a read whose turn does not come within the wait is refused as ingest_first', async () => {
    const g = gate(0.2, 1000);
    await pressFor(g.p, 60_000);
    const long = reads(3000);
    const first = g.p.run(long.read);
    const second = g.p.run(reads().read);
    const refusal = expect(second).rejects.toMatchObject({ reason: 'ingest_first' });
    await jest.advanceTimersByTimeAsync(1000);
    await refusal;
    await expect(second).rejects.toBeInstanceOf(StorageBusyError);
    expect(g.refused).toBe(1);
    await jest.advanceTimersByTimeAsync(2000);
    await first;
  });

  it('waiting reads go once the writer is no longer pressed', async () => {
    const g = gate(0.01);
    await pressFor(g.p, 2000);
    const r = reads();
    // The saved budget goes to the first reads; the rest wait for the writer.
    const all = Promise.all(Array.from({ length: 40 }, () => g.p.run(r.read)));
    await jest.advanceTimersByTimeAsync(1000);
    const byPressure = r.done;
    expect(byPressure).toBeLessThan(40);
    // The write ended at 2 s; its busy share falls below one half within a second after.
    await jest.advanceTimersByTimeAsync(2000);
    expect(g.p.pressed()).toBe(false);
    await jest.advanceTimersByTimeAsync(200);
    await all;
    expect(r.done).toBe(40);
    expect(r.most).toBeGreaterThan(1);
  });

  it('a share of 100 % never makes a read wait', async () => {
    const g = gate(1);
    await pressFor(g.p, 60_000);
    const r = reads();
    const all = Promise.all(Array.from({ length: 4 }, () => g.p.run(r.read)));
    await jest.advanceTimersByTimeAsync(READ_MS);
    await all;
    expect(r.most).toBe(4);
  });

  it('a read that fails still spends its time and lets the next one go', async () => {
    const g = gate(0.2);
    await pressFor(g.p, 60_000);
    const failing = g.p.run(
      () => new Promise<void>((_, reject) => setTimeout(() => reject(new Error('read failed')), 10)),
    );
    const failed = expect(failing).rejects.toThrow('read failed');
    const next = g.p.run(reads().read);
    await jest.advanceTimersByTimeAsync(100);
    await failed;
    await expect(next).resolves.toBeUndefined();
  });

  it('refuses a share outside (0, 1]', () => {
    expect(() => new IngestPrecedence({ share: 0, waitMs: 1 })).toThrow(RangeError);
    expect(() => new IngestPrecedence({ share: 1.5, waitMs: 1 })).toThrow(RangeError);
  });
});
