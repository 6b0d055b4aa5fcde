import { localStorageStore } from '../../../sdk/src/local-storage-store';
import type { BufferStore } from '../../../sdk/src/store';
import type { WireEvent } from '../../../sdk/src/types';
import { FakeClock, status } from './fakes';
import { harness } from './harness';

class MemoryStore implements BufferStore {
  saved: readonly WireEvent[] = [];
  saves = 0;
  async load(): Promise<readonly WireEvent[]> {
    return this.saved;
  }
  async save(events: readonly WireEvent[]): Promise<void> {
    this.saves++;
    this.saved = JSON.parse(JSON.stringify(events));
  }
}

class FakeStorage {
  readonly items = new Map<string, string>();
  constructor(private readonly quota = Infinity) {}
  getItem(k: string): string | null {
    return this.items.get(k) ?? null;
  }
  setItem(k: string, v: string): void {
    if (v.length > this.quota) throw new Error('QuotaExceededError');
    this.items.set(k, v);
  }
  removeItem(k: string): void {
    this.items.delete(k);
  }
}

describe('persistence', () => {
  it('saves what close() could not send; the next run sends it, same id and ts', async () => {
    const store = new MemoryStore();
    const clock = new FakeClock();
    const first = harness({ persistence: store, batchSize: 10 }, clock);
    first.transport.answerAlways(() => status(503, '60'));
    first.client.error(new Error('survives'));
    first.client.metric('m', 1);
    const closing = first.client.close({ timeoutMs: 1000 });
    await clock.advance(1000);
    await closing;
    expect(store.saved.map((e) => e.type)).toEqual(['error', 'metric']);
    const savedIds = store.saved.map((e) => e.id);

    const second = harness({ persistence: store, batchSize: 10 }, clock);
    second.client.lifecycle('app.restarted');
    await second.client.flush();
    const sent = second.transport.sentEvents;
    expect(sent.map((e) => e.type)).toEqual(['error', 'lifecycle', 'metric']); // by priority, as always
    const restored = sent.filter((e) => savedIds.includes(e.id));
    expect(restored).toEqual(first.transport.requests[0]!.events); // same id, ts, everything
    await clock.advance(0);
    expect(store.saved).toEqual([]); // the round emptied the buffer and saved that
  });

  it('saves what flush() could not send by its deadline, including what was captured meanwhile', async () => {
    const store = new MemoryStore();
    const clock = new FakeClock();
    const { client, transport } = harness(
      { persistence: store, batchSize: 10, flushIntervalMs: 60_000 },
      clock,
    );
    transport.answerAlways(() => status(503, '60'));
    client.error(new Error('first'));
    const flushed = client.flush({ timeoutMs: 10_000 });
    await clock.advance(0); // the attempt fails; the round's snapshot holds the error
    expect(store.saved.map((e) => e.type)).toEqual(['error']);
    client.lifecycle('app.stopping'); // captured while flush() waits out Retry-After
    await clock.advance(10_000);
    await flushed;
    expect(store.saved.map((e) => e.type)).toEqual(['error', 'lifecycle']);
  });

  it('does not overwrite the store before it has loaded, and loads a corrupt store as empty', async () => {
    const storage = new FakeStorage();
    (globalThis as { localStorage?: unknown }).localStorage = storage;
    try {
      storage.setItem('sluice.buffer', '{not json');
      expect(await localStorageStore().load()).toEqual([]);
      storage.setItem(
        'sluice.buffer',
        JSON.stringify([{ id: 'x' }, 5, { id: 'a', ts: 1, name: 'n', type: 'log', source: { app: 'a' } }]),
      );
      expect((await localStorageStore().load()).map((e) => e.id)).toEqual(['a']);
    } finally {
      delete (globalThis as { localStorage?: unknown }).localStorage;
    }
  });

  it('localStorageStore keeps the higher-priority part when over quota', async () => {
    const storage = new FakeStorage(2000);
    (globalThis as { localStorage?: unknown }).localStorage = storage;
    try {
      const store = localStorageStore('k');
      const events: WireEvent[] = Array.from({ length: 40 }, (_, i) => ({
        id: `id-${i}`,
        type: i < 5 ? 'error' : 'metric',
        name: 'n',
        ts: i,
        source: { app: 'a' },
      }));
      await store.save(events);
      const kept = await store.load();
      expect(kept.length).toBeGreaterThan(0);
      expect(kept.length).toBeLessThan(40);
      expect(kept.map((e) => e.id)).toEqual(events.slice(0, kept.length).map((e) => e.id));
      await store.save([]);
      expect(storage.items.has('k')).toBe(false);
    } finally {
      delete (globalThis as { localStorage?: unknown }).localStorage;
    }
  });

  it('localStorageStore without localStorage keeps nothing and does not throw', async () => {
    const store = localStorageStore();
    await expect(store.save([])).resolves.toBeUndefined();
    await expect(store.load()).resolves.toEqual([]);
  });
});
