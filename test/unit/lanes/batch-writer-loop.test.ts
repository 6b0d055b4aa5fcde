import { createLogger } from '../../../src/log/logger';
import { createMetrics } from '../../../src/metrics/instruments';
import { BatchWriterLoop } from '../../../src/lanes/batch-writer-loop';
import { CommitTicket } from '../../../src/lanes/commit-ticket';
import { BoundedLane, type LaneItem } from '../../../src/lanes/lane';
import type { Storage, StorageRow, WriteResult } from '../../../src/storage/port';
import type { OutcomeCount } from '../../../src/loss-map/outcome';

/**
 * The writer's scheduling and retry logic, against a scripted transport-level
 * fake (the real databases are exercised in test/integration).
 */
class ScriptedStorage {
  batches: string[][] = [];
  failures: Array<Error & { code?: string }> = [];
  poison = new Set<string>();
  /** Rows here are the events' ids. */
  async writeRows(rows: readonly StorageRow[]): Promise<WriteResult> {
    const ids = rows as unknown as readonly string[];
    const next = this.failures.shift();
    if (next) throw next;
    if (ids.some((id) => this.poison.has(id))) {
      throw Object.assign(new Error('invalid input'), { code: '22P02' });
    }
    this.batches.push([...ids]);
    return { inserted: ids.length };
  }
}

function setup(batchSize = 3, flushIntervalMs = 20, maxInFlight = 1, writeWhenIdle = false) {
  const storage = new ScriptedStorage();
  const errorLane = new BoundedLane('error', { maxEvents: 100, maxBytes: 1e6 });
  const standardLane = new BoundedLane('standard', { maxEvents: 100, maxBytes: 1e6 });
  const metrics = createMetrics();
  const counted: OutcomeCount[] = [];
  const writer = new BatchWriterLoop({
    errorLane,
    standardLane,
    storage: storage as unknown as Storage,
    batchSize,
    flushIntervalMs,
    maxInFlight,
    writeWhenIdle,
    backoff: { baseMs: 1, maxMs: 5 },
    clock: { now: () => Date.now() },
    logger: createLogger('silent'),
    metrics,
    outcomes: (c) => counted.push(c),
  });
  const admit = (lane: BoundedLane, ids: string[], ticket: CommitTicket | null = null) => {
    const items: LaneItem[] = ids.map((id) => ({
      row: id as unknown as StorageRow,
      id,
      lane: lane.name,
      bytes: 10,
      ticket,
      admittedAt: Date.now(),
      app: 'a',
      ts: 0,
      type: 'log',
      origin: 'direct',
    }));
    expect(lane.tryAdmit(items, items.length * 10)).toBe(true);
    writer.notify();
  };
  return { storage, errorLane, standardLane, writer, admit, metrics, counted };
}

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in 5 s');
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('BatchWriterLoop', () => {
  it('drains the error lane first and batches by size', async () => {
    const { storage, errorLane, standardLane, writer, admit } = setup(3, 10_000);
    admit(standardLane, ['s1', 's2']);
    admit(errorLane, ['e1', 'e2']);
    writer.start();
    await until(() => storage.batches.length >= 1);
    expect(storage.batches[0]).toEqual(['e1', 'e2', 's1']);
    await writer.stop();
    expect(storage.batches.flat()).toEqual(['e1', 'e2', 's1', 's2']);
    expect(errorLane.heldEvents + standardLane.heldEvents).toBe(0);
  });

  it('flushes a partial batch after the flush interval', async () => {
    const { storage, standardLane, writer, admit } = setup(100, 30);
    writer.start();
    const t0 = Date.now();
    admit(standardLane, ['a']);
    await until(() => storage.batches.length === 1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(25);
    await writer.stop();
  });

  it('with writeWhenIdle (ack=stored), writes a part batch at once when nothing is being written', async () => {
    const { storage, standardLane, writer, admit } = setup(100, 10_000, 3, true);
    writer.start();
    const t0 = Date.now();
    const ticket = new CommitTicket();
    admit(standardLane, ['a', 'b'], ticket);
    ticket.arm(2);
    await ticket.committed;
    // The flush interval is 10 s: only the group-commit rule writes the batch sooner.
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(storage.batches).toEqual([['a', 'b']]);
    await writer.stop();
  });

  it('with writeWhenIdle, gathers what arrives during a write into the next batch', async () => {
    const { storage, standardLane, writer, admit } = setup(100, 10_000, 3, true);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const write = storage.writeRows.bind(storage);
    let calls = 0;
    storage.writeRows = async (rows) => {
      if (calls++ === 0) await gate;
      return write(rows);
    };
    writer.start();
    admit(standardLane, ['a']);
    await until(() => calls === 1);
    admit(standardLane, ['b']);
    admit(standardLane, ['c']);
    // A write is in flight: b and c wait for it, though write slots are free.
    expect(calls).toBe(1);
    release();
    await until(() => storage.batches.length === 2);
    expect(storage.batches).toEqual([['a'], ['b', 'c']]);
    await writer.stop();
  });

  it('retries a transient failure and keeps the batch (and its room) until committed', async () => {
    const { storage, standardLane, writer, admit, metrics } = setup(2, 1);
    storage.failures.push(new Error('connection reset'), new Error('timeout'));
    const ticket = new CommitTicket();
    admit(standardLane, ['a', 'b'], ticket);
    ticket.arm(2);
    writer.start();
    await ticket.committed;
    expect(storage.batches).toEqual([['a', 'b']]);
    expect((await metrics.writeRetries.get()).values[0]?.value).toBe(2);
    await writer.stop();
    expect(standardLane.heldEvents).toBe(0);
  });

  it('isolates a row the database refuses and stores the rest', async () => {
    const { storage, standardLane, writer, admit, metrics } = setup(8, 1);
    storage.poison.add('p');
    admit(standardLane, ['a', 'b', 'c', 'p', 'd', 'e', 'f', 'g']);
    writer.start();
    await writer.stop();
    expect(storage.batches.flat().sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    expect((await metrics.eventsDropped.get()).values[0]?.value).toBe(1);
  });

  it('keeps up to maxInFlight batches in flight, and stop waits for all of them', async () => {
    const { storage, standardLane, writer, admit } = setup(2, 1, 2);
    const gates: Array<() => void> = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const write = storage.writeRows.bind(storage);
    storage.writeRows = async (rows) => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await new Promise<void>((release) => gates.push(release));
      inFlight--;
      return write(rows);
    };
    admit(standardLane, ['a', 'b', 'c', 'd', 'e', 'f']);
    writer.start();
    await until(() => gates.length === 2);
    // Both windows are taken; the third batch waits for a commit.
    expect(standardLane.queued).toBe(2);
    const stopped = writer.stop();
    while (storage.batches.length < 3) {
      gates.shift()?.();
      await new Promise((r) => setTimeout(r, 2));
    }
    await stopped;
    expect(mostInFlight).toBe(2);
    expect(storage.batches.flat().sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(standardLane.heldEvents).toBe(0);
  });

  it('abort ends retries of a storage that never comes back', async () => {
    const { storage, standardLane, writer, admit } = setup(1, 1);
    for (let i = 0; i < 1e4; i++) storage.failures.push(new Error('down'));
    admit(standardLane, ['a']);
    writer.start();
    await until(() => storage.failures.length < 1e4 - 2);
    const stopped = writer.stop();
    writer.abort();
    await stopped;
    expect(writer.held()).toBe(1);
  });

  describe('dropHeld (forced shutdown)', () => {
    const dropped = (counted: readonly OutcomeCount[]) =>
      counted.filter((c) => c.outcome === 'dropped').reduce((n, c) => n + c.count, 0);

    it('counts what is queued and what an aborted write held as dropped, once, and frees their room', async () => {
      const { storage, errorLane, standardLane, writer, admit, metrics, counted } = setup(2, 1);
      for (let i = 0; i < 1e4; i++) storage.failures.push(new Error('down'));
      admit(errorLane, ['e1']);
      admit(standardLane, ['s1', 's2', 's3', 's4']);
      writer.start();
      await until(() => storage.failures.length < 1e4 - 2);
      const stopped = writer.stop();
      writer.abort();
      await stopped;
      expect(writer.held()).toBe(5);

      expect(writer.dropHeld('shutdown_timeout')).toBe(5);
      expect(writer.held()).toBe(0);
      expect(errorLane.heldEvents + standardLane.heldEvents).toBe(0);
      expect(counted).toEqual([
        {
          app: 'a',
          minute: 0,
          type: 'log',
          outcome: 'dropped',
          reason: 'shutdown_timeout',
          origin: '',
          count: 5,
        },
      ]);
      expect((await metrics.eventsDropped.get()).values).toContainEqual(
        expect.objectContaining({ labels: { reason: 'shutdown_timeout' }, value: 5 }),
      );
      expect(writer.dropHeld('shutdown_timeout')).toBe(0);
      expect(dropped(counted)).toBe(5);
    });

    it('leaves out the part of a bisected batch that was stored or refused before the abort', async () => {
      const { storage, standardLane, writer, admit, counted } = setup(4, 1);
      // [a b c d] is refused (d is poison) and bisected: [a b] commits, [c d] then meets an outage.
      storage.poison.add('d');
      const write = storage.writeRows.bind(storage);
      storage.writeRows = async (rows) => {
        const ids = rows as unknown as string[];
        if (ids.length === 2 && ids[0] === 'c') throw new Error('down');
        return write(rows);
      };
      admit(standardLane, ['a', 'b', 'c', 'd']);
      writer.start();
      await until(() => storage.batches.length === 1);
      const stopped = writer.stop();
      writer.abort();
      await stopped;
      expect(storage.batches).toEqual([['a', 'b']]);
      expect(writer.held()).toBe(2);
      expect(writer.dropHeld('second_signal')).toBe(2);
      expect(dropped(counted)).toBe(2);
      expect(standardLane.heldEvents).toBe(0);
    });
  });

  describe('settled (the read barrier)', () => {
    it('is null when nothing is held: a read with empty lanes does not wait', () => {
      const { writer } = setup();
      writer.start();
      expect(writer.settled()).toBeNull();
      return writer.stop();
    });

    it('writes queued events at once, not at the flush interval, and resolves after their commit', async () => {
      const { storage, errorLane, standardLane, writer, admit } = setup(100, 60_000);
      writer.start();
      admit(standardLane, ['s1', 's2']);
      admit(errorLane, ['e1']);
      const t0 = Date.now();
      await writer.settled();
      expect(Date.now() - t0).toBeLessThan(1000);
      expect(storage.batches.flat().sort()).toEqual(['e1', 's1', 's2']);
      expect(writer.settled()).toBeNull();
      await writer.stop();
    });

    it('waits for every batch in flight and every queued event before it, whatever commits first', async () => {
      const { storage, standardLane, writer, admit } = setup(2, 1, 3);
      const gates: Array<() => void> = [];
      const write = storage.writeRows.bind(storage);
      storage.writeRows = async (rows) => {
        await new Promise<void>((release) => gates.push(release));
        return write(rows);
      };
      writer.start();
      admit(standardLane, ['a', 'b', 'c', 'd', 'e']);
      await until(() => gates.length === 3);
      let done = false;
      void writer.settled()?.then(() => (done = true));
      admit(standardLane, ['later']);
      // The last batch commits first: the first two are still in flight.
      gates.pop()?.();
      await until(() => storage.batches.length === 1);
      // Every callback its commit set off has run by the next turn of the event loop.
      await new Promise((r) => setImmediate(r));
      expect(done).toBe(false);
      gates.shift()?.();
      gates.shift()?.();
      await until(() => done);
      expect(storage.batches.flat().sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
      for (;;) {
        const release = gates.shift();
        if (release === undefined && standardLane.heldEvents === 0) break;
        release?.();
        await new Promise((r) => setTimeout(r, 2));
      }
      await writer.stop();
    });

    it('does not resolve while the writes fail: the caller bounds the wait', async () => {
      const { storage, standardLane, writer, admit } = setup(1, 1);
      for (let i = 0; i < 1e4; i++) storage.failures.push(new Error('down'));
      writer.start();
      admit(standardLane, ['a']);
      let done = false;
      void writer.settled()?.then(() => (done = true));
      await until(() => storage.failures.length < 1e4 - 3);
      expect(done).toBe(false);
      storage.failures.length = 0;
      await until(() => done);
      await writer.stop();
    });
  });
});
