import fc from 'fast-check';
import { isAppName } from '../../../src/events/app-name';
import { isTsInWindow } from '../../../src/events/ts-window';
import { countEvents, rawSubject, type OutcomeSubject } from '../../../src/loss-map/event-outcomes';
import { NO_APP, type OutcomeCount } from '../../../src/loss-map/outcome';

const subjects = fc.array(
  fc.record({
    app: fc.constantFrom('web', 'ios', 'billing', ''),
    ts: fc.integer({ min: 0, max: 5 * 60_000 }),
    type: fc.constantFrom('metric', 'log', 'error', 'lifecycle'),
  }),
  { maxLength: 300 },
);

function keyOf(app: string, minute: number, type: string): string {
  return JSON.stringify([app, minute, type]);
}

function count(events: readonly OutcomeSubject[]): OutcomeCount[] {
  const out: OutcomeCount[] = [];
  countEvents(
    (c) => out.push(c),
    events,
    (e) => e,
    'accepted',
    '',
    'direct',
  );
  return out;
}

describe('countEvents', () => {
  it('sums every event into its (app, minute, type), however the events are interleaved', () => {
    fc.assert(
      fc.property(subjects, (events) => {
        const expected = new Map<string, number>();
        for (const e of events) {
          const k = keyOf(e.app, e.ts - (e.ts % 60_000), e.type);
          expected.set(k, (expected.get(k) ?? 0) + 1);
        }
        const got = new Map<string, number>();
        for (const c of count(events)) {
          expect(c).toMatchObject({ outcome: 'accepted', reason: '', origin: 'direct' });
          expect(c.count).toBeGreaterThan(0);
          const k = keyOf(c.app, c.minute, c.type);
          got.set(k, (got.get(k) ?? 0) + c.count);
        }
        expect(got).toEqual(expected);
      }),
    );
  });

  it('hands on one count per distinct subject of a request, not one per run', () => {
    const events: OutcomeSubject[] = [];
    for (let i = 0; i < 100; i++)
      events.push({ app: 'web', ts: 1_000, type: i % 2 === 0 ? 'metric' : 'log' });
    expect(count(events)).toEqual([
      { app: 'web', minute: 0, type: 'metric', outcome: 'accepted', reason: '', origin: 'direct', count: 50 },
      { app: 'web', minute: 0, type: 'log', outcome: 'accepted', reason: '', origin: 'direct', count: 50 },
    ]);
  });

  it('stays linear past 32 distinct subjects: all of them are counted', () => {
    const events: OutcomeSubject[] = Array.from({ length: 200 }, (_, i) => ({
      app: `app-${i % 50}`,
      ts: 0,
      type: 'log',
    }));
    const counts = count(events);
    expect(counts.reduce((n, c) => n + c.count, 0)).toBe(200);
    expect(new Set(counts.map((c) => c.app)).size).toBe(50);
  });
});

describe('rawSubject', () => {
  const limits = { maxSourceLength: 128, maxAgeMs: 86_400_000, maxFutureMs: 60_000 };
  const now = 1_764_590_400_123;

  it('keys any value off the wire by an app name or NO_APP, and a time in the window or now', () => {
    const app = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.constantFrom('x\u0000', 'x\ud800', '\udc00', 'a'.repeat(129), 'a'.repeat(5400), '', 'ok'),
      fc.anything(),
    );
    const ts = fc.oneof(
      fc.double(),
      fc.constantFrom(1e300, -1e20, 2 ** 62, now + 0.5, now - 86_400_001, now + 60_001, now),
      fc.anything(),
    );
    fc.assert(
      fc.property(app, ts, fc.anything(), (a, t, type) => {
        const s = rawSubject({ source: { app: a }, ts: t, type }, now, limits);
        expect(s.app === NO_APP || isAppName(s.app, limits.maxSourceLength)).toBe(true);
        expect(s.app === (isAppName(a, limits.maxSourceLength) ? a : NO_APP)).toBe(true);
        expect(Number.isSafeInteger(s.ts)).toBe(true);
        expect(s.ts === now || (s.ts === t && isTsInWindow(s.ts, now, limits))).toBe(true);
        expect(['error', 'lifecycle', 'metric', 'log', 'unknown']).toContain(s.type);
      }),
    );
  });

  it('reads nothing else: a value that is not an event is NO_APP, now, unknown', () => {
    for (const raw of [null, 7, 'x', [], { source: null }, { source: [] }])
      expect(rawSubject(raw, now, limits)).toEqual({ app: NO_APP, ts: now, type: 'unknown' });
  });
});
