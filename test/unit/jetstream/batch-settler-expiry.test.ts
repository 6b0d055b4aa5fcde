import { createLogger } from '../../../src/log/logger';
import { createMetrics } from '../../../src/metrics/instruments';
import { createQueueMetrics } from '../../../src/metrics/queue-instruments';
import type { TelemetryEvent } from '../../../src/events/types';
import type { OutcomeCount } from '../../../src/loss-map/outcome';
import type { Fetched } from '../../../src/jetstream/batch-puller';
import { BatchSettler } from '../../../src/jetstream/batch-settler';
import type { DeadLetterPolicy } from '../../../src/jetstream/dead-letter-policy';
import { encodeEvent } from '../../../src/jetstream/event-codec';
import type { PulledMessage } from '../../../src/jetstream/pulled-message';
import type { StorageRow } from '../../../src/storage/port';

const NOW = 10 * 60_000;
/** Event ids (UUIDs, as the codec requires) by the name the test gives each message. */
const IDS: Record<string, string> = {
  'old-first': '0190f3c2-7f00-7000-8000-000000000001',
  'old-again': '0190f3c2-7f00-7000-8000-000000000002',
  young: '0190f3c2-7f00-7000-8000-000000000003',
};
const NAMES = Object.fromEntries(Object.entries(IDS).map(([name, id]) => [id, name]));
const MAX_AGE_MS = 60_000;

function event(id: string): TelemetryEvent {
  return {
    id,
    type: 'log',
    name: 'checkout.step',
    ts: 120_000,
    app: 'shop',
    version: null,
    env: null,
    value: null,
    summary: null,
    error: null,
    message: 'm',
    attributes: {},
  };
}

/** A pulled message of one event, stored by the stream at `storedAtMs`, on its `deliveryCount`th delivery. */
function message(id: string, storedAtMs: number, deliveryCount: number, answers: string[]): Fetched {
  const msg = {
    info: { stream: 'S', streamSequence: 1, deliveryCount, storedAtMs },
    data: encodeEvent(event(IDS[id] ?? id)),
    subject: 'p.standard',
    header: () => undefined,
    ack: () => answers.push(`ack ${id}`),
    nak: () => answers.push(`nak ${id}`),
    working: () => undefined,
  };
  return { msg: msg as unknown as PulledMessage, lane: 'standard', events: 1 };
}

/**
 * SLUICE_NATS_MAX_AGE at the worker: a message the stream stored longer ago is, on its first
 * delivery, acked unwritten and its events counted as expired; one delivered before is written
 * (part of it may be stored already: counting it expired could count an event twice).
 */
describe('BatchSettler: messages past the max age', () => {
  it('expires an old message on its first delivery only, and writes the rest', async () => {
    const written: string[] = [];
    const answers: string[] = [];
    const counted: OutcomeCount[] = [];
    const metrics = createMetrics();
    const queueMetrics = createQueueMetrics(metrics.registry);
    const settler = new BatchSettler({
      nc: { flush: async () => undefined },
      storage: {
        toRow: (e) => e.id as unknown as StorageRow,
        writeRows: async (rows) => {
          written.push(...(rows as unknown as string[]).map((id) => NAMES[id] ?? id));
          return { inserted: rows.length };
        },
      },
      ackWaitMs: 30_000,
      backoff: { baseMs: 1, maxMs: 5 },
      deadLetters: { exhausted: () => false } as unknown as DeadLetterPolicy,
      loop: { backoff: async () => undefined, aborted: false },
      maxAgeMs: MAX_AGE_MS,
      clock: { now: () => NOW },
      metrics,
      queueMetrics,
      logger: createLogger('silent'),
      outcomes: (c) => counted.push(c),
    });

    await settler.settle(
      [
        message('old-first', NOW - MAX_AGE_MS - 1, 1, answers),
        message('old-again', NOW - 5 * MAX_AGE_MS, 2, answers),
        message('young', NOW - MAX_AGE_MS, 1, answers),
      ],
      { inHand: 0, prefetched: [] },
    );

    expect(written).toEqual(['old-again', 'young']);
    expect(answers.sort()).toEqual(['ack old-again', 'ack old-first', 'ack young']);
    expect(counted).toEqual([
      {
        app: 'shop',
        minute: 120_000,
        type: 'log',
        outcome: 'expired',
        reason: 'max_age',
        origin: '',
        count: 1,
      },
    ]);
    expect((await queueMetrics.eventsExpired.get()).values[0]?.value).toBe(1);
  });
});
