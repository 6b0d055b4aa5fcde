import fc from 'fast-check';
import type { EventLimits } from '../../../src/events/limits';
import { INTAKE_REJECTION_REASONS, REJECTION_REASONS } from '../../../src/events/rejection';
import { RequestScan } from '../../../src/events/scan/scan-request';
import { validateEvent } from '../../../src/events/validate';
import { toCopyLine } from '../../../src/storage/postgres/copy-encoding';
import { copyLineFromScan } from '../../../src/storage/postgres/copy-line-from-scan';
import { sqliteRowFromScan } from '../../../src/storage/sqlite/row-from-scan';
import { toSqliteRow } from '../../../src/storage/sqlite/write';
import { EventGenerator } from '../../bench/workload';
import { bodyArbitrary, hostileBody, nearValidBody, NOW, SMALL_LIMITS } from './single-pass-bodies';

// An event sent without an id gets a random one on each path: the same one here, so rows compare.
jest.mock('../../../src/events/assigned-id', () => ({
  assignedEventId: () => '0190f3c2-0000-7000-8000-00000000abcd',
}));

const DEFAULT_LIMITS: EventLimits = {
  maxAttributes: 32,
  maxAttributeKeyLength: 64,
  maxStringLength: 1024,
  maxStackLength: 16384,
  maxNameLength: 128,
  maxSourceLength: 128,
  maxAgeMs: 7 * 86_400_000,
  maxFutureMs: 300_000,
};
const MAX_EVENTS = 50;

type EventResult =
  | { ok: true; row: string; sqliteRow: unknown; bytes: number; id: string; app: string; type: string }
  | { ok: false; reason: string; field?: string };

/** Today's path: `JSON.parse`, `validateEvent`, then `toCopyLine` (PostgreSQL) and `toSqliteRow`. */
function typedPath(body: Buffer, limits: EventLimits): EventResult[] | 'invalid_json' | 'invalid_body' {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return 'invalid_json';
  }
  const events = (parsed as { events?: unknown } | null)?.events;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Array.isArray(events)) {
    return 'invalid_body';
  }
  return events.map((raw) => typed(raw, limits));
}

/** Every rejection reason the typed path gave while compared with the single pass. */
const reached = new Set<string>();

function typed(raw: unknown, limits: EventLimits): EventResult {
  const v = validateEvent(raw, limits, NOW);
  if (!v.ok) {
    reached.add(v.rejection.reason);
    return { ok: false, ...v.rejection };
  }
  const e = v.event;
  return {
    ok: true,
    row: toCopyLine(e).bytes.toString('hex'),
    sqliteRow: toSqliteRow(e),
    bytes: v.bytes,
    id: e.id,
    app: e.app,
    type: e.type,
  };
}

/** The single pass, with the typed path for the events it leaves (as intake runs it). */
function singlePass(
  body: Buffer,
  limits: EventLimits,
): { results: EventResult[]; fast: number } | 'fallback' {
  const scan = RequestScan.open(body, limits, NOW, MAX_EVENTS, () => undefined);
  if (scan === null) return 'fallback';
  const results: EventResult[] = [];
  let fast = 0;
  let step;
  do {
    step = scan.step(3, {
      fast(f, index) {
        fast++;
        results[index] = {
          ok: true,
          row: Buffer.from(copyLineFromScan(body, f).bytes).toString('hex'),
          sqliteRow: sqliteRowFromScan(body, f),
          bytes: f.bytes,
          id: scan.idOf(f),
          app: scan.textOf(f.app, true),
          type: f.type,
        };
      },
      slow(raw, index) {
        results[index] = typed(raw, limits);
      },
    });
  } while (step === 'more');
  return step === 'fallback' ? 'fallback' : { results, fast };
}

/** Both paths agree; answers whether the single pass took the body (not a fallback). */
function agree(body: Buffer, limits: EventLimits): { admitted: boolean; fast: number } {
  const before = typedPath(body, limits);
  const after = singlePass(body, limits);
  if (after === 'fallback') return { admitted: false, fast: 0 };
  expect(before).toEqual(after.results);
  return { admitted: true, fast: after.fast };
}

describe('the single pass from body bytes to rows (PostgreSQL COPY lines, SQLite bound values)', () => {
  it.each([
    ['default', DEFAULT_LIMITS],
    ['small', SMALL_LIMITS],
  ])(
    'writes the rows and gives the answers of the typed path on generated bodies (%s limits)',
    (_l, limits) => {
      let admitted = 0;
      let fast = 0;
      fc.assert(
        fc.property(bodyArbitrary, (body) => {
          const a = agree(body, limits);
          if (a.admitted) admitted++;
          fast += a.fast;
        }),
        { numRuns: 400 },
      );
      // The generated events are valid often enough that the fast path is what is compared.
      expect(fast).toBeGreaterThan(100);
      // Bodies of the envelope's shape are all read by the single pass (fallback is for other shapes).
      expect(admitted).toBe(400);
    },
  );

  it('agrees on near-valid bodies (one byte changed, cut, or inserted) and hostile ones', () => {
    fc.assert(
      fc.property(fc.oneof(nearValidBody, hostileBody), (body) => {
        agree(body, SMALL_LIMITS);
        agree(body, DEFAULT_LIMITS);
      }),
      { numRuns: 1500 },
    );
  });

  it('takes every event of the bench workload on the fast path', () => {
    const body = Buffer.from(JSON.stringify({ events: new EventGenerator(5).take(MAX_EVENTS, NOW) }));
    const { admitted, fast } = agree(body, DEFAULT_LIMITS);
    expect(admitted).toBe(true);
    expect(fast).toBe(MAX_EVENTS);
  });

  it('leaves what it must to the typed path', () => {
    const event = {
      id: '0190F3C2-0000-7000-8000-000000000001',
      type: 'metric',
      name: 'a.b',
      ts: NOW,
      source: { app: 'x' },
      value: 1,
    };
    const dup = Buffer.from(`{"events":[${JSON.stringify(event).slice(0, -1)},"value":2}]}`);
    expect(singlePass(dup, DEFAULT_LIMITS)).toMatchObject({ fast: 0 });
    agree(dup, DEFAULT_LIMITS);
    expect(singlePass(Buffer.from('{"events":[],"more":1}'), DEFAULT_LIMITS)).toBe('fallback');
    expect(singlePass(Buffer.from('{"events":[1] }x'), DEFAULT_LIMITS)).toBe('fallback');
  });

  it('meets every rejection reason validation gives, under both limit sets', () => {
    for (const limits of [DEFAULT_LIMITS, SMALL_LIMITS]) {
      reached.clear();
      fc.assert(
        fc.property(bodyArbitrary, (body) => {
          agree(body, limits);
        }),
        { numRuns: 400 },
      );
      // A reason never met is a rule of the contract the single pass is never compared on.
      const unreached = Object.keys(REJECTION_REASONS).filter(
        (r) => !reached.has(r) && !(INTAKE_REJECTION_REASONS as readonly string[]).includes(r),
      );
      expect(unreached).toEqual([]);
    }
  });
});
