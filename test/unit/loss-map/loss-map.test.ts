import fc from 'fast-check';
import { parseClientReport } from '../../../src/loss-map/client-report';
import { lossMapOf, lossMapsByMinute } from '../../../src/loss-map/loss-map';
import { OUTCOMES, type OutcomeRow } from '../../../src/loss-map/outcome';

const row = (outcome: OutcomeRow['outcome'], count: number, extra: Partial<OutcomeRow> = {}): OutcomeRow => ({
  minute: 0,
  type: 'log',
  outcome,
  reason: '',
  origin: '',
  count,
  ...extra,
});

describe('the loss map (loss-map/loss-map.ts)', () => {
  it('takes an SDK’s events from its reports and the rest from the collector', () => {
    const m = lossMapOf([
      row('captured', 10, { origin: 'sdk' }),
      row('sdk_dropped', 2, { reason: 'sampled', origin: 'sdk' }),
      row('sdk_rejected', 1, { reason: 'name_invalid', origin: 'sdk' }),
      row('sdk_delivered', 7, { origin: 'sdk' }),
      // The collector's view of the same events is not counted again…
      row('accepted', 8, { origin: 'sdk' }),
      row('rejected', 1, { reason: 'name_invalid', origin: 'sdk' }),
      // …but a plain sender's events are.
      row('accepted', 3, { origin: 'direct' }),
      row('rejected', 1, { reason: 'ts_invalid', origin: 'direct' }),
      row('stored', 9),
      row('dead_lettered', 1, { reason: 'storage_rejected' }),
      row('throttled', 40, { reason: 'rate_limited', origin: 'sdk' }),
      // Requests refused unread: counted apart, outside the identity.
      row('shed', 3, { type: '', reason: 'overloaded' }),
    ]);
    expect(m).toEqual({
      generated: 14,
      stored: 9,
      lost: 5,
      losses: {
        sdk: { sampled: 2 },
        collector: { name_invalid: 1, ts_invalid: 1 },
        storage: {},
        queue: { storage_rejected: 1 },
        shutdown: {},
        unrecorded: {},
      },
      pending: { sdk: 0, pipeline: 0 },
      generated_unrecorded: 0,
      throttled: { rate_limited: 40 },
      dropped_samples: {},
      shed_requests: 3,
    });
  });

  it('holds generated = stored + lost + pending for any counts, per window and per minute', () => {
    const arbitraryRow = fc.record({
      minute: fc.integer({ min: 0, max: 5 }).map((m) => m * 60_000),
      type: fc.constantFrom('log', 'metric', 'error'),
      outcome: fc.constantFrom(...OUTCOMES),
      reason: fc.constantFrom('', 'sampled', 'x'),
      origin: fc.constantFrom('sdk' as const, 'direct' as const, '' as const),
      count: fc.integer({ min: 0, max: 1000 }),
    });
    fc.assert(
      fc.property(fc.array(arbitraryRow, { maxLength: 40 }), (rows) => {
        // Minutes 0–2 are past the horizon (settled), 3–5 are not.
        const horizon = { now: 4 * 60_000, horizonMs: 60_000 };
        for (const m of [
          lossMapOf(rows),
          ...lossMapsByMinute(rows),
          lossMapOf(rows, horizon),
          ...lossMapsByMinute(rows, horizon),
        ]) {
          const losses = Object.values(m.losses).flatMap((by) => Object.values(by));
          expect(m.lost).toBe(losses.reduce((a, b) => a + b, 0));
          expect(m.generated).toBe(m.stored + m.lost + m.pending.sdk + m.pending.pipeline);
        }
        for (const m of lossMapsByMinute(rows, horizon).filter((m) => m.minute <= 2 * 60_000))
          expect(m.pending).toEqual({ sdk: 0, pipeline: 0 });
      }),
    );
  });

  it('past the horizon, pending becomes a named loss, and a negative one the generation it lacked', () => {
    const horizon = { now: 10 * 60_000, horizonMs: 60_000 };
    const old = (outcome: OutcomeRow['outcome'], count: number, extra: Partial<OutcomeRow> = {}) =>
      row(outcome, count, { minute: 60_000, ...extra });
    // An SDK that captured 10, delivered 6 and never reported the rest; the pipeline stored 5 of them.
    const lost = lossMapOf(
      [old('captured', 10, { origin: 'sdk' }), old('sdk_delivered', 6, { origin: 'sdk' }), old('stored', 5)],
      horizon,
    );
    expect(lost).toMatchObject({ generated: 10, stored: 5, lost: 5, pending: { sdk: 0, pipeline: 0 } });
    expect(lost.losses.unrecorded).toEqual({ sdk: 4, pipeline: 1 });
    // A collector killed before it wrote its acceptance of 7 events it had already stored.
    const uncounted = lossMapOf([old('accepted', 3, { origin: 'direct' }), old('stored', 10)], horizon);
    expect(uncounted).toMatchObject({ generated: 10, generated_unrecorded: 7, stored: 10, lost: 0 });
    expect(uncounted.pending).toEqual({ sdk: 0, pipeline: 0 });
    // A report lost with its collector: delivered without the capture, captured elsewhere cancels it.
    const moved = lossMapOf(
      [old('captured', 4, { origin: 'sdk' }), old('sdk_delivered', 6, { origin: 'sdk' }), old('stored', 4)],
      horizon,
    );
    expect(moved).toMatchObject({
      generated: 4,
      generated_unrecorded: 0,
      lost: 0,
      pending: { sdk: 0, pipeline: 0 },
    });
    // Within the horizon the same counts are still pending.
    expect(lossMapOf([row('captured', 10, { minute: 9 * 60_000, origin: 'sdk' })], horizon).pending.sdk).toBe(
      10,
    );
  });
});

describe('client reports at the collector (loss-map/client-report.ts)', () => {
  const limits = { maxAppLength: 128 };
  const id = '0190f3c2-7f00-7000-8000-000000000001';

  it('turns rows into counts, leaving out zeros and another app than the key’s', () => {
    const report = parseClientReport(
      {
        id,
        rows: [
          { app: 'shop', minute: 120_000, type: 'log', captured: 5, delivered: 0, dropped: { sampled: 2 } },
          { app: 'other', minute: 120_000, type: 'log', captured: 9 },
        ],
      },
      limits,
      'shop',
    );
    expect(report).toEqual({
      id,
      counts: [
        {
          app: 'shop',
          minute: 120_000,
          type: 'log',
          origin: 'sdk',
          outcome: 'captured',
          reason: '',
          count: 5,
        },
        {
          app: 'shop',
          minute: 120_000,
          type: 'log',
          origin: 'sdk',
          outcome: 'sdk_dropped',
          reason: 'sampled',
          count: 2,
        },
      ],
    });
  });

  it('refuses what is not a report, naming the field; no rows is no report', () => {
    expect(parseClientReport({ rows: [] }, limits, null)).toBeNull();
    expect(parseClientReport([], limits, null)).toEqual({ refused: 'report' });
    expect(parseClientReport({ rows: [{}] }, limits, null)).toEqual({ refused: 'report.id' });
    const base = { app: 'a', minute: 60_000, type: 'log' };
    expect(parseClientReport({ id, rows: [{ ...base, minute: 1 }] }, limits, null)).toEqual({
      refused: 'report.rows.minute',
    });
    expect(parseClientReport({ id, rows: [{ ...base, captured: -1 }] }, limits, null)).toEqual({
      refused: 'report.rows.captured',
    });
    expect(parseClientReport({ id, rows: [{ ...base, dropped: { sampled: 1.5 } }] }, limits, null)).toEqual({
      refused: 'report.rows.dropped',
    });
    expect(parseClientReport({ id, rows: Array(257).fill(base) }, limits, null)).toEqual({
      refused: 'report.rows',
    });
  });
});
