import fc from 'fast-check';
import type { TelemetryEvent } from '../../../src/events/types';
import { toCopyLine } from '../../../src/storage/postgres/copy-encoding';
import { metricBlocksCopy } from '../../../src/storage/postgres/metric-blocks-copy';
import { arrayElements, copyTuples } from '../../support/binary-copy-read';
import { telemetryEvent } from '../../support/telemetry-events';

/*
 * The blocks writer groups a batch's samples by (app, name, minute, origin) and orders each block
 * by ts, samples of the same ts in batch order. Read back here from the binary COPY payload: every
 * sample once, in its own group, in that order, whatever the batch's ts span (a sample near 1970
 * or centuries ahead beside one of today).
 */

const NOW = Date.UTC(2026, 11, 6, 12);
const MINUTE = 60_000;

interface BlockRead {
  readonly bucket: number;
  readonly app: string;
  readonly name: string;
  readonly ids: string[];
  readonly ts: number[];
  readonly origin: string;
}

/** The blocks of a `metric_blocks` binary COPY payload: bucket, app, name, the id and ts arrays, origin. */
function blocksOf(payload: Buffer): BlockRead[] {
  return copyTuples(payload).map((row) => {
    expect(row).toHaveLength(15);
    const [bucket, app, name, ids, ts] = row as Buffer[];
    return {
      bucket: Number(bucket?.readBigInt64BE()),
      app: String(app?.toString('utf8')),
      name: String(name?.toString('utf8')),
      ids: arrayElements(ids as Buffer).map((b) => b.toString('hex')),
      ts: arrayElements(ts as Buffer).map((b) => Number(b.readBigInt64BE())),
      origin: String(row[14]?.toString('latin1')),
    };
  });
}

/** Times of a batch: today's, many in the same millisecond; sometimes one near 1970 or centuries ahead. */
const ts = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 0, max: 200_000 }).map((d) => NOW + d) },
  { weight: 6, arbitrary: fc.constantFrom(NOW, NOW + 1, NOW + MINUTE) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 120_000 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 120_000 }).map((d) => 2 ** 50 + d) },
);

const batch = fc.array(
  fc.record({
    app: fc.constantFrom('web', 'api'),
    name: fc.constantFrom('m.a', 'm.b'),
    ts,
    origin: fc.nat(2),
  }),
  { minLength: 1, maxLength: 300 },
);

describe('metric blocks from a batch of samples', () => {
  it('hold every sample once, in its (app, name, minute, origin) block, by ts and then batch order', () => {
    fc.assert(
      fc.property(batch, (specs) => {
        const events: TelemetryEvent[] = specs.map((s, i) =>
          telemetryEvent(
            'metric',
            {
              id: `0190f3c2-0000-7000-8000-${String(i).padStart(12, '0')}`,
              app: s.app,
              name: s.name,
              ts: s.ts,
              value: i,
            },
            NOW,
          ),
        );
        const origins = specs.map((s) => `origin-${s.origin}`);
        const { blocks, blockKeys } = metricBlocksCopy(
          events.map((e) => toCopyLine(e).bytes),
          origins,
        );
        const read = blocksOf(blocks);
        expect(blockKeys.map((k) => k.samples)).toEqual(read.map((b) => b.ids.length));
        const seen = new Set<number>();
        const groups = new Set<string>();
        for (const b of read) {
          const group = `${b.bucket} ${b.app} ${b.name} ${b.origin}`;
          expect(groups.has(group)).toBe(false);
          groups.add(group);
          let last: { ts: number; index: number } | null = null;
          b.ids.forEach((id, k) => {
            const index = parseInt(id.slice(-12), 10);
            const s = specs[index];
            expect(s).toBeDefined();
            expect(seen.has(index)).toBe(false);
            seen.add(index);
            const t = b.ts[k] as number;
            expect(t).toBe(s?.ts);
            expect([t - (t % MINUTE), s?.app, s?.name, origins[index]]).toEqual([
              b.bucket,
              b.app,
              b.name,
              b.origin,
            ]);
            if (last !== null) expect(t > last.ts || (t === last.ts && index > last.index)).toBe(true);
            last = { ts: t, index };
          });
        }
        expect(seen.size).toBe(specs.length);
      }),
      { numRuns: 200 },
    );
  });
});
