import { PriorityBuffer, type BufferEntry } from '../../../sdk/src/buffer';
import type { EventType } from '../../../sdk/src/types';

let seq = 0;
function entry(type: EventType, name: string, bytes = 10): BufferEntry {
  return {
    event: { id: `id-${name}`, type, name, ts: 1, source: { app: 'a' } },
    bytes,
    seq: ++seq,
  };
}

function setup(maxEvents: number, maxBytes = 1e9): { buffer: PriorityBuffer; dropped: string[] } {
  const dropped: string[] = [];
  return { buffer: new PriorityBuffer({ maxEvents, maxBytes }, (e) => dropped.push(e.event.name)), dropped };
}

describe('PriorityBuffer (priority drop: metric < log < lifecycle < error, oldest first)', () => {
  it('under a full buffer drops metrics oldest first, then logs, then lifecycle, errors last', () => {
    const { buffer, dropped } = setup(4);
    buffer.push(entry('error', 'e1'));
    buffer.push(entry('metric', 'm1'));
    buffer.push(entry('lifecycle', 'c1'));
    buffer.push(entry('log', 'l1'));
    buffer.push(entry('metric', 'm2'));
    buffer.push(entry('log', 'l2'));
    buffer.push(entry('error', 'e2'));
    buffer.push(entry('error', 'e3'));
    buffer.push(entry('error', 'e4'));
    buffer.push(entry('error', 'e5'));
    expect(dropped).toEqual(['m1', 'm2', 'l1', 'l2', 'c1', 'e1']);
    expect(buffer.events().map((e) => e.name)).toEqual(['e2', 'e3', 'e4', 'e5']);
  });

  it('drops a new metric itself when the buffer is full of higher priorities', () => {
    const { buffer, dropped } = setup(2);
    buffer.push(entry('log', 'l1'));
    buffer.push(entry('error', 'e1'));
    buffer.push(entry('metric', 'm1'));
    expect(dropped).toEqual(['m1']);
    expect(buffer.size).toBe(2);
  });

  it('is bounded by bytes as well as by count', () => {
    const { buffer, dropped } = setup(100, 100);
    buffer.push(entry('metric', 'm1', 40));
    buffer.push(entry('error', 'e1', 40));
    buffer.push(entry('lifecycle', 'c1', 40));
    expect(dropped).toEqual(['m1']);
    expect(buffer.bytes).toBe(80);
    buffer.push(entry('error', 'e2', 60));
    expect(dropped).toEqual(['m1', 'c1']);
    expect(buffer.bytes).toBe(100);
    buffer.push(entry('error', 'e3', 10));
    expect(dropped).toEqual(['m1', 'c1', 'e1']);
    expect(buffer.events().map((e) => e.name)).toEqual(['e2', 'e3']);
  });

  it('takes highest priority first, oldest first within one, within count and bytes', () => {
    const { buffer } = setup(100);
    for (const [t, n] of [
      ['metric', 'm1'],
      ['error', 'e1'],
      ['log', 'l1'],
      ['error', 'e2'],
      ['lifecycle', 'c1'],
    ] as const)
      buffer.push(entry(t, n));
    expect(buffer.take(3, 1e9).map((e) => e.event.name)).toEqual(['e1', 'e2', 'c1']);
    expect(buffer.take(10, 15).map((e) => e.event.name)).toEqual(['l1']); // 2 × 10 bytes > 15
    expect(buffer.take(10, 1).map((e) => e.event.name)).toEqual(['m1']); // always at least one
    expect(buffer.size).toBe(0);
  });

  it('requeues a batch at the front, in order, so it is resent (and dropped) first', () => {
    const { buffer, dropped } = setup(3);
    const a = entry('metric', 'a');
    const b = entry('metric', 'b');
    buffer.push(a);
    buffer.push(b);
    const batch = buffer.take(2, 1e9);
    buffer.push(entry('metric', 'c'));
    buffer.requeue(batch);
    expect(buffer.events().map((e) => e.name)).toEqual(['a', 'b', 'c']);
    expect(buffer.minSeq()).toBe(a.seq);
    buffer.push(entry('metric', 'd'));
    expect(dropped).toEqual(['a']);
  });

  it('counts by type and reports the smallest seq', () => {
    const { buffer } = setup(10);
    expect(buffer.minSeq()).toBe(Infinity);
    const first = entry('log', 'l');
    buffer.push(first);
    buffer.push(entry('error', 'e'));
    expect(buffer.countsByType()).toEqual({ metric: 0, log: 1, lifecycle: 0, error: 1 });
    expect(buffer.minSeq()).toBe(first.seq);
  });
});
