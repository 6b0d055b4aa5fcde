import fc from 'fast-check';
import type { TelemetryEvent } from '../../../src/events/types';
import { METRIC_SAMPLES } from '../../../src/storage/layout/columns';
import { toMetricSampleRow } from '../../../src/storage/layout/rows';
import { toCopyLine } from '../../../src/storage/postgres/copy-encoding';
import { attrs, telemetryEvent } from '../../support/telemetry-events';

/*
 * A metric sample's row, as the writer holds it, is its `metric_samples` columns as binary COPY
 * fields: a length (-1 for NULL) and the send form of each. Read back here independently, field by
 * field, and compared with `toMetricSampleRow` (the typed row every other writer stores).
 */

const NOW = Date.UTC(2026, 11, 6, 12);

type Field = Buffer | null;

function fieldsOf(row: Buffer): Field[] {
  const fields: Field[] = [];
  let at = 0;
  while (at < row.length) {
    const length = row.readInt32BE(at);
    at += 4;
    if (length < 0) fields.push(null);
    else {
      fields.push(row.subarray(at, at + length));
      at += length;
    }
  }
  expect(at).toBe(row.length);
  return fields;
}

function uuidOf(b: Buffer): string {
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function valueOf(type: string, f: Field): unknown {
  if (f === null) return null;
  if (type === 'uuid') return uuidOf(f);
  if (type === 'bigint') return Number(f.readBigInt64BE(0));
  if (type === 'float8') return f.readDoubleBE(0);
  return f.toString('utf8');
}

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('', '\\N', '\\', '\t', '\n\r', '\u0000', '\uD800x', '🚀', 'naïve'),
);

const sample: fc.Arbitrary<TelemetryEvent> = fc
  .record({
    app: fc.constantFrom('web', 'a\tb', 'x\\N', 'ü'),
    second: fc.integer({ min: -150, max: 150 }),
    version: fc.option(text),
    message: fc.option(text),
    attribute: text,
    number: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant(-0)),
    count: fc.option(fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constant(Number.MAX_SAFE_INTEGER))),
  })
  .map((r) =>
    telemetryEvent(
      'metric',
      {
        app: r.app,
        ts: NOW + r.second * 1000,
        version: r.version,
        message: r.message,
        attributes: attrs({ k: r.attribute, [r.attribute]: r.number }),
        value: r.count === null ? r.number : null,
        summary: r.count === null ? null : { count: r.count, min: r.number, max: 2, sum: 3, avg: 0 },
      },
      NOW,
    ),
  );

describe("a metric sample's row: its columns as binary COPY fields", () => {
  it('holds each column of the typed row in its send form, NULL as length -1', () => {
    fc.assert(
      fc.property(sample, (e) => {
        const line = toCopyLine(e);
        expect(line.metric).toBe(true);
        const fields = fieldsOf(line.bytes);
        expect(fields).toHaveLength(METRIC_SAMPLES.columns.length);
        const row = toMetricSampleRow(e);
        METRIC_SAMPLES.columns.forEach((c, i) => {
          // -0 is stored as 0, as the text forms of the other writers make it.
          const expected = row[c.name] === 0 ? 0 : row[c.name];
          expect([c.name, valueOf(c.type, fields[i] ?? null)]).toEqual([c.name, expected]);
        });
      }),
      { numRuns: 300 },
    );
  });
});
