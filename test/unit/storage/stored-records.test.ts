import fc from 'fast-check';
import type { EventType } from '../../../src/events/types';
import { storableText } from '../../../src/storage/layout/rows';
import { toCopyLine, type CopyLine } from '../../../src/storage/postgres/copy-encoding';
import { metricBlocksCopy } from '../../../src/storage/postgres/metric-blocks-copy';
import { storedRecords, type StoredRecords } from '../../../src/storage/postgres/stored-records';
import { telemetryEvent } from '../../support/telemetry-events';

const NOW = Date.UTC(2026, 11, 5, 12);
const MINUTE = 60_000;

/** COPY text of one field back to its text (`\\`, `\n`, `\r`, `\t`). */
function unescape(field: string): string {
  return field.replace(/\\(.)/g, (_, c: string) => ({ n: '\n', r: '\r', t: '\t' })[c] ?? c);
}

/** A COPY payload of records as rows of unescaped fields. */
function rowsOf(payload: Buffer): string[][] {
  const text = payload.toString('utf8');
  if (text === '') return [];
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => line.split('\t').map(unescape));
}

// Text COPY must escape, text PostgreSQL cannot store, and plain text, few enough to share groups.
const text = fc.constantFrom(
  'a',
  'b',
  'tab\there',
  'back\\slash',
  'new\nline',
  'cr\rx',
  'nul\u0000',
  'é ✓',
  '',
);
const event = fc.record({
  type: fc.constantFrom<EventType>('metric', 'metric', 'log', 'error', 'lifecycle'),
  app: text,
  name: text,
  ts: fc.oneof(
    fc.integer({ min: NOW - 3 * MINUTE, max: NOW + 3 * MINUTE }),
    fc.integer({ min: -3 * MINUTE, max: 3 * MINUTE }),
  ),
});

/** What the COPY path records for `lines`: the samples' from their blocks, the events' from their lines. */
function recordsOf(lines: readonly CopyLine[], countStored: boolean): StoredRecords {
  const samples = lines.filter((l) => l.metric).map((l) => l.bytes);
  const events = lines.filter((l) => !l.metric).map((l) => l.bytes);
  return storedRecords(events, samples.length > 0 ? metricBlocksCopy(samples).blockKeys : [], countStored);
}

describe('storedRecords: what a COPY batch logs and counts beside its rows', () => {
  it('logs each (app, name, minute) of the samples once and counts every row per (app, type, minute), as SQL groups them', () => {
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 60 }), fc.boolean(), (specs, countStored) => {
        const events = specs.map((s) => telemetryEvent(s.type, { app: s.app, name: s.name, ts: s.ts }, NOW));
        const records = recordsOf(events.map(toCopyLine), countStored);

        const expectedLog = new Set<string>();
        const expectedCounts = new Map<string, number>();
        for (const e of events) {
          const app = storableText(e.app);
          // SQL's `ts - ts % 60000`: JavaScript's % truncates the same way.
          const minute = e.ts - (e.ts % MINUTE);
          if (e.type === 'metric')
            expectedLog.add(JSON.stringify([app, storableText(e.name), String(minute)]));
          const key = JSON.stringify([app, e.type, String(minute)]);
          expectedCounts.set(key, (expectedCounts.get(key) ?? 0) + 1);
        }

        const log = rowsOf(records.invalidations).map((r) => JSON.stringify(r));
        expect(new Set(log).size).toBe(log.length);
        expect(new Set(log)).toEqual(expectedLog);

        const counts = rowsOf(records.storedCounts);
        if (!countStored) {
          expect(counts).toEqual([]);
          return;
        }
        const got = new Map<string, number>();
        for (const [app, type, minute, outcome, reason, origin, count] of counts) {
          expect([outcome, reason, origin]).toEqual(['stored', '', '']);
          const key = JSON.stringify([app, type, minute]);
          expect(got.has(key)).toBe(false);
          got.set(key, Number(count));
        }
        expect(got).toEqual(expectedCounts);
      }),
      { numRuns: 300 },
    );
  });

  it('writes nothing for an empty batch', () => {
    const records = storedRecords([], [], true);
    expect(records.invalidations.length).toBe(0);
    expect(records.storedCounts.length).toBe(0);
  });

  it('refuses a line that is not a row of its table rather than record a wrong minute', () => {
    const line = toCopyLine(telemetryEvent('log', { app: 'a', name: 'm', ts: NOW }, NOW));
    const broken = Buffer.from(line.bytes.toString('utf8').replace(/\t\d+\t/, '\t1.5e12\t'));
    expect(() => storedRecords([broken], [], true)).toThrow(/ts is not an integer/);
    expect(() => storedRecords([Buffer.from('no tabs here\n')], [], true)).toThrow(/fewer fields/);
  });
});
