import { createMetrics } from '../../../src/metrics/instruments';
import { createQueueMetrics } from '../../../src/metrics/queue-instruments';
import type { PublishMessage, PublishResult } from '../../../src/jetstream/async-publisher';
import { CoalescingPublisher } from '../../../src/jetstream/coalescing-publisher';
import { decodeEvents } from '../../../src/jetstream/event-codec';
import { encodeEvents, PAYLOAD_ENVELOPE_BYTES } from '../../../src/jetstream/event-batches';
import type { TelemetryEvent } from '../../../src/events/types';
import { telemetryEvent } from '../../support/telemetry-events';

function events(count: number): TelemetryEvent[] {
  return Array.from({ length: count }, () => telemetryEvent('metric'));
}

/** A publisher whose acks the test gives, one call (one set of messages) at a time. */
class FakePublisher {
  readonly calls: Array<{ messages: readonly PublishMessage[]; ack: (o: PublishResult[]) => void }> = [];
  publishAll(_subject: string, messages: readonly PublishMessage[]): Promise<PublishResult[]> {
    return new Promise((resolve) => this.calls.push({ messages, ack: resolve }));
  }
  /** Acks call `i` with `outcome` for each of its messages. */
  ack(i: number, outcome: PublishResult = { kind: 'stored', duplicate: false }): void {
    const call = this.calls[i]!;
    call.ack(call.messages.map(() => outcome));
  }
  idsOf(i: number): string[] {
    return this.calls[i]!.messages.flatMap((m) => (decodeEvents(m.data) ?? []).map((e) => e!.id));
  }
}

function coalescer(publisher: FakePublisher, o: { targetBytes?: number; timeoutMs?: number } = {}) {
  return new CoalescingPublisher({
    lane: 'standard',
    origin: 'direct',
    subject: 'sluice.events.standard',
    publisher,
    maxPayloadBytes: () => 1024 * 1024,
    publishTimeoutMs: o.timeoutMs ?? 2000,
    maxInFlight: 4,
    targetBytes: o.targetBytes ?? 256 * 1024,
    metrics: createQueueMetrics(createMetrics().registry),
  });
}

const flush = () => new Promise((r) => setImmediate(r));

describe('CoalescingPublisher', () => {
  it('publishes a lone request at once, in a message of its own', async () => {
    const p = new FakePublisher();
    const batch = events(3);
    const answer = coalescer(p).publish(encodeEvents(batch));
    expect(p.calls).toHaveLength(1);
    expect(p.idsOf(0)).toEqual(batch.map((e) => e.id));
    p.ack(0);
    expect(await answer).toEqual([{ kind: 'stored', duplicate: false }]);
  });

  it('puts the requests that arrive while a message awaits its ack in the next message, in order', async () => {
    const p = new FakePublisher();
    const c = coalescer(p);
    const first = c.publish(encodeEvents(events(1)));
    const [a, b] = [events(2), events(3)];
    const later = [c.publish(encodeEvents(a)), c.publish(encodeEvents(b))];
    expect(p.calls).toHaveLength(1);
    p.ack(0);
    await first;
    await flush();
    expect(p.calls).toHaveLength(2);
    expect(p.idsOf(1)).toEqual([...a, ...b].map((e) => e.id));
    expect(p.calls[1]!.messages[0]!.headers).toEqual({ 'Sluice-Events': '5', 'Sluice-Origin': 'direct' });
    p.ack(1);
    expect(await Promise.all(later)).toEqual([
      [{ kind: 'stored', duplicate: false }],
      [{ kind: 'stored', duplicate: false }],
    ]);
  });

  it('refuses every request of a message that failed', async () => {
    const p = new FakePublisher();
    const c = coalescer(p);
    const first = c.publish(encodeEvents(events(1)));
    const later = [c.publish(encodeEvents(events(1))), c.publish(encodeEvents(events(1)))];
    p.ack(0);
    await first;
    await flush();
    p.ack(1, { kind: 'no_stream' });
    expect(await Promise.all(later)).toEqual([[{ kind: 'no_stream' }], [{ kind: 'no_stream' }]]);
  });

  it('answers a waiting request with a timeout and never publishes it afterwards', async () => {
    const p = new FakePublisher();
    const c = coalescer(p, { timeoutMs: 50 });
    const first = c.publish(encodeEvents(events(1)));
    const waiting = c.publish(encodeEvents(events(1)));
    expect(await waiting).toEqual([{ kind: 'timeout' }]);
    p.ack(0);
    await first;
    await flush();
    expect(p.calls).toHaveLength(1);
  });

  it('sends a further message in flight once a full message waits, and splits at the target size', async () => {
    const p = new FakePublisher();
    const one = encodeEvents(events(1)).bytes;
    const target = (one + 1) * 10 + PAYLOAD_ENVELOPE_BYTES;
    const c = coalescer(p, { targetBytes: target });
    const answers = [c.publish(encodeEvents(events(1)))];
    for (let i = 0; i < 25; i++) answers.push(c.publish(encodeEvents(events(1))));
    // The first went alone; then, with it in flight, each time a full message's worth waited, a
    // full message left without waiting for an ack: two of ten, five stay for the next ack.
    expect(p.calls.map((_, i) => p.idsOf(i).length)).toEqual([1, 10, 10]);
    for (const call of p.calls.slice(1))
      expect(call.messages[0]!.data.byteLength).toBeLessThanOrEqual(target);
    for (let i = 0; i < 3; i++) p.ack(i);
    await flush();
    expect(p.calls.map((_, i) => p.idsOf(i).length)).toEqual([1, 10, 10, 5]);
    p.ack(3);
    expect((await Promise.all(answers)).every((o) => o[0]?.kind === 'stored')).toBe(true);
  });
});
