import fc from 'fast-check';
import type { Principal } from '../../../src/auth/api-keys';
import { IntakeService } from '../../../src/intake/intake-service';
import type { IntakeAnswer } from '../../../src/intake/intake-answer';
import { createIntakeMetrics } from '../../../src/metrics/intake-instruments';
import { createMetrics } from '../../../src/metrics/instruments';
import { DrainRate } from '../../../src/writer/drain-rate';
import { BoundedLane, type LaneItem } from '../../../src/lanes/lane';
import { LaneSink } from '../../../src/lanes/lane-sink';
import { RateLimits } from '../../../src/ratelimit/event-rate-limiter';
import { MemoryRateLimiter } from '../../../src/ratelimit/memory-rate-limiter';
import type { StorageRow } from '../../../src/storage/port';
import { toCopyLine, type CopyLine } from '../../../src/storage/postgres/copy-encoding';
import { copyLineFromScan } from '../../../src/storage/postgres/copy-line-from-scan';
import type { OutcomeCount } from '../../../src/loss-map/outcome';
import { bodyArbitrary, hostileBody, nearValidBody, NOW, SMALL_LIMITS } from '../storage/single-pass-bodies';

// An event sent without an id gets a random one on each path: the same one here, so rows compare.
jest.mock('../../../src/events/assigned-id', () => ({
  assignedEventId: () => '0190f3c2-0000-7000-8000-00000000abcd',
}));

/** One collector's intake with PostgreSQL's COPY rows; `singlePass` gives it the row writer of the single pass. */
function intake(singlePass: boolean, standardCapacity: number, rateLimit: number, maxEvents = 6) {
  const clock = { now: () => NOW };
  const errorLane = new BoundedLane('error', { maxEvents: 6, maxBytes: 1e6 });
  const standardLane = new BoundedLane('standard', {
    maxEvents: standardCapacity,
    maxBytes: standardCapacity > 100 ? 1e7 : 4000,
  });
  const metrics = createMetrics();
  const outcomes: OutcomeCount[] = [];
  const service = new IntakeService({
    limits: SMALL_LIMITS,
    maxEventsPerRequest: maxEvents,
    sink: new LaneSink({
      errorLane,
      standardLane,
      writer: { notify: () => undefined, drainRate: new DrainRate(clock) },
      ack: 'queued',
      ackTimeoutMs: 1000,
      storageUp: () => true,
      toRow: (event) => toCopyLine(event) as unknown as StorageRow,
    }),
    rateLimiter: rateLimit > 0 ? new MemoryRateLimiter(new RateLimits(rateLimit, new Map(), 1), clock) : null,
    clock,
    metrics,
    intakeMetrics: createIntakeMetrics(metrics.registry),
    outcomes: (c) => outcomes.push(c),
    ...(singlePass ? { rowFromScan: (body, e) => copyLineFromScan(body, e) as unknown as StorageRow } : {}),
  });
  return { service, lanes: [errorLane, standardLane], metrics, outcomes };
}

type Answer = IntakeAnswer | { error: string };

async function answer(run: () => Promise<IntakeAnswer>): Promise<Answer> {
  try {
    return await run();
  } catch (err) {
    return { error: (err as { code?: string }).code ?? String(err) };
  }
}

function parsed(body: Buffer): unknown[] | null {
  try {
    const doc = JSON.parse(body.toString('utf8')) as { events?: unknown };
    return Array.isArray(doc?.events) && !Array.isArray(doc) ? doc.events : null;
  } catch {
    return null;
  }
}

function held(lanes: BoundedLane[]): unknown[] {
  return lanes.map((lane) => ({
    events: lane.heldEvents,
    bytes: lane.heldBytes,
    rows: lane.shift(100).map((i: LaneItem) => ({
      id: i.id,
      bytes: i.bytes,
      row: Buffer.from((i.row as unknown as CopyLine).bytes).toString('hex'),
    })),
  }));
}

async function counters(metrics: ReturnType<typeof createMetrics>): Promise<unknown> {
  const json = await metrics.registry.getMetricsAsJSON();
  return json
    .filter((m) => /events_(received|rejected|accepted|throttled)|requests_rejected/.test(m.name))
    .map((m) => ({ name: m.name, values: m.values.filter((v) => v.value !== 0) }));
}

/** The loss-map counts summed per key (the two paths may split a request's runs differently). */
function lossMapCounts(counts: readonly OutcomeCount[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of counts) {
    const key = [c.app, c.minute, c.type, c.outcome, c.reason, c.origin].join('|');
    out[key] = (out[key] ?? 0) + c.count;
  }
  return out;
}

const principal: fc.Arbitrary<Principal | null> = fc.constantFrom(null, {
  kind: 'ingest',
  keyId: 'k1',
  app: 'web-shop',
} as unknown as Principal);

describe('intake of a body: the single pass and the typed path', () => {
  it('give the same answers, lane rows, sizes, counters and loss-map counts on valid, near-valid and hostile bodies', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof({ weight: 4, arbitrary: bodyArbitrary }, nearValidBody, hostileBody), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom(0, 0, 3),
        principal,
        async (bodies, capacity, rateLimit, who) => {
          const fast = intake(true, capacity, rateLimit);
          const typed = intake(false, capacity, rateLimit);
          for (const body of bodies) {
            const events = parsed(body);
            if (events === null) continue; // refused before intake, the same on both paths
            const a = await answer(
              async () =>
                (await fast.service.ingestBody(
                  body,
                  who,
                  async () => undefined,
                  () => undefined,
                )) ?? (await fast.service.ingest(events, who)),
            );
            const b = await answer(() => typed.service.ingest(events, who));
            expect(a).toEqual(b);
          }
          expect(held(fast.lanes)).toEqual(held(typed.lanes));
          expect(await counters(fast.metrics)).toEqual(await counters(typed.metrics));
          expect(lossMapCounts(fast.outcomes)).toEqual(lossMapCounts(typed.outcomes));
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** A valid metric event the single pass takes as it is. */
const METRIC_EVENT = {
  id: '0190f3c2-0000-7000-8000-000000000001',
  type: 'metric',
  name: 'a.b',
  ts: NOW,
  source: { app: 'web-shop' },
  value: 1,
  attributes: { region: 'eu' },
};

describe('the single pass and a client report', () => {
  it('reads the trailing report member and takes the request as the SDK’s, as the typed path does', async () => {
    const event = METRIC_EVENT;
    const report = { id: '0190f3c2-0000-7000-8000-0000000000ff', rows: [] };
    const body = Buffer.from(JSON.stringify({ events: [event], report }));
    const seen: unknown[] = [];
    const fast = intake(true, 10, 0);
    const taken = await fast.service.ingestBody(
      body,
      null,
      async () => undefined,
      () => undefined,
      (raw) => {
        seen.push(raw);
        return { origin: 'sdk' };
      },
    );
    expect(taken).toMatchObject({ kind: 'admitted', accepted: 1 });
    expect(seen).toEqual([report]);
    expect(fast.outcomes).toEqual([
      expect.objectContaining({ outcome: 'accepted', origin: 'sdk', count: 1 }),
    ]);
  });
});

describe('the single pass in slices', () => {
  it('lets the loop poll between slices of a large body, and takes the body whole', async () => {
    const { service, lanes } = intake(true, 1000, 0, 1000);
    const events = Array.from({ length: 300 }, (_, i) => ({
      id: `0190f3c2-0000-7000-8000-${String(i).padStart(12, '0')}`,
      type: 'metric',
      name: 'a.b',
      ts: NOW,
      source: { app: 'web-shop' },
      value: i,
    }));
    let slices = 1;
    const outcome = await service.ingestBody(
      Buffer.from(JSON.stringify({ events })),
      null,
      async () => {
        slices++;
      },
      () => undefined,
    );
    expect(outcome).toEqual({ kind: 'admitted', accepted: 300, rejected: [], advice: [] });
    expect(slices).toBe(3);
    expect(lanes[1]?.heldEvents).toBe(300);
  });
});

describe('the single pass and the body’s shape check', () => {
  const event = METRIC_EVENT;

  // [what the body holds, the body, whether the scan asks for the shape check]
  it.each<[string, unknown, boolean]>([
    ['events of the contract', { events: [event, { ...event, id: event.id.replace('01', '02') }] }, false],
    ['an unknown member holding a scalar', { events: [{ ...event, extra: 1 }] }, false],
    ['an unknown member holding an object', { events: [{ ...event, extra: { a: 1 } }] }, true],
    [
      'an attribute holding an array (invalid, parsed by the typed path)',
      { events: [{ ...event, attributes: { a: [] } }] },
      true,
    ],
    ['an invalid event (parsed by the typed path)', { events: [{ ...event, ts: 'now' }] }, true],
    ['an element that is not an object', { events: [event, 5] }, true],
    ['a client report', { events: [event], report: { id: event.id, rows: [] } }, true],
  ])('%s', async (_label, body, asked) => {
    let calls = 0;
    const { service } = intake(true, 10, 0);
    const outcome = await service.ingestBody(
      Buffer.from(JSON.stringify(body)),
      null,
      async () => undefined,
      () => {
        calls++;
      },
    );
    expect(outcome).not.toBeNull();
    expect(calls > 0).toBe(asked);
  });

  it('refuses the body when the check throws, before anything is admitted', async () => {
    const { service, lanes, outcomes } = intake(true, 10, 0);
    const body = Buffer.from(JSON.stringify({ events: [event, { ...event, extra: [[1]] }] }));
    const refused = new Error('too deep');
    await expect(
      service.ingestBody(
        body,
        null,
        async () => undefined,
        () => {
          throw refused;
        },
      ),
    ).rejects.toBe(refused);
    expect(lanes.map((l) => l.heldEvents)).toEqual([0, 0]);
    expect(outcomes).toEqual([]);
  });
});
