import fc from 'fast-check';
import { copyPayloads, toCopyLine } from '../../../src/storage/postgres/copy-encoding';
import { telemetryEvent } from '../../support/telemetry-events';

const NOW = Date.UTC(2026, 11, 5, 12);

const lines = (payload: Buffer): string[] =>
  payload.length === 0 ? [] : payload.toString('utf8').slice(0, -1).split('\n');

describe('copyPayloads: metric samples apart, events as one COPY payload in ts order', () => {
  it('holds every row of its table once: events ordered by ts, lines of one ts in batch order; samples in batch order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ metric: fc.boolean(), ts: fc.integer({ min: -5, max: 5 }) }), { maxLength: 80 }),
        (specs) => {
          const batch = specs.map((s, i) =>
            toCopyLine(
              telemetryEvent(s.metric ? 'metric' : 'log', { ts: NOW + s.ts * 1000, name: `n${i}` }, NOW),
            ),
          );
          const payloads = copyPayloads(batch);
          for (const metric of [true, false]) {
            const expected = batch
              .map((line, i) => ({ line, i }))
              .filter(({ line }) => line.metric === metric)
              .sort((a, b) => (metric ? 0 : specs[a.i]!.ts - specs[b.i]!.ts) || a.i - b.i)
              .map(({ line }) =>
                metric ? line.bytes.toString('hex') : line.bytes.toString('utf8').slice(0, -1),
              );
            const actual = metric
              ? payloads.metricSamples.map((s) => s.toString('hex'))
              : lines(payloads.events);
            expect(actual).toEqual(expected);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
