import { writeIsolating } from '../../../src/loss-map/isolating-write';
import type { OutcomeBatch, OutcomeCount } from '../../../src/loss-map/outcome';

const count = (app: string, n = 1): OutcomeCount => ({
  app,
  minute: 0,
  type: 'log',
  outcome: 'accepted',
  reason: '',
  origin: 'direct',
  count: n,
});

class RowFault extends Error {}
const isRowFault = (err: unknown): boolean => err instanceof RowFault;

/** A storage that refuses a whole batch holding an app in `bad`, and records what it wrote. */
function storage(bad: Set<string>, away: () => boolean = () => false) {
  const written: OutcomeBatch[] = [];
  let calls = 0;
  const write = async (b: OutcomeBatch): Promise<void> => {
    calls++;
    if (away()) throw new Error('connection lost');
    const apps = [...b.counts, ...b.reports.flatMap((r) => r.counts)].map((c) => c.app);
    if (apps.some((a) => bad.has(a))) throw new RowFault('refused');
    written.push(b);
  };
  return { write, written, calls: () => calls };
}

const apps = (bs: readonly OutcomeBatch[]): string[] =>
  bs.flatMap((b) => [...b.counts.map((c) => c.app), ...b.reports.map((r) => r.id)]).sort();

describe('writeIsolating', () => {
  it('writes a batch once when storage takes it', async () => {
    const s = storage(new Set());
    const batch = { counts: [count('a'), count('b')], reports: [], now: 0 };
    const r = await writeIsolating(batch, s.write, isRowFault);
    expect(s.written).toEqual([batch]);
    expect(r.failure).toBeUndefined();
    expect(r.refused.counts).toEqual([]);
  });

  it('drops only the rows refused alone, writes every other row once, in O(k log n) writes', async () => {
    const s = storage(new Set(['bad-1', 'bad-2']));
    const counts = Array.from({ length: 128 }, (_, i) => count(`app-${i}`));
    counts[17] = count('bad-1', 4);
    counts[90] = count('bad-2', 5);
    const report = { id: 'r1', counts: [count('reported')] };
    const badReport = { id: 'r2', counts: [count('bad-1')] };
    const r = await writeIsolating({ counts, reports: [report, badReport], now: 0 }, s.write, isRowFault);
    expect(r.refused.counts).toEqual([counts[17], counts[90]]);
    expect(r.refused.reports).toEqual([badReport]);
    expect(r.refusal).toBeInstanceOf(RowFault);
    expect(r.failure).toBeUndefined();
    const expected = [...counts.filter((_, i) => i !== 17 && i !== 90).map((c) => c.app), 'r1'].sort();
    expect(apps(s.written)).toEqual(expected);
    expect(s.calls()).toBeLessThanOrEqual(1 + 3 * 2 * Math.ceil(Math.log2(131)));
  });

  it('keeps whole a batch that failed for another reason than its rows', async () => {
    const s = storage(new Set(['bad']), () => true);
    const batch = {
      counts: [count('a'), count('bad')],
      reports: [{ id: 'r', counts: [count('a')] }],
      now: 0,
    };
    const r = await writeIsolating(batch, s.write, isRowFault);
    expect(r.kept.counts).toEqual(batch.counts);
    expect(r.kept.reports).toEqual(batch.reports);
    expect(r.failure).toBeInstanceOf(Error);
    expect(s.calls()).toBe(1);
  });

  it('when storage goes away halfway, keeps exactly what was not written yet', async () => {
    let writes = 0;
    const s = storage(new Set(['bad']), () => ++writes === 3);
    const counts = ['a', 'b', 'bad', 'c', 'd', 'e', 'f', 'g'].map((a) => count(a));
    const r = await writeIsolating({ counts, reports: [], now: 0 }, s.write, isRowFault);
    expect(r.failure).toBeInstanceOf(Error);
    // Each count is written, kept or refused: exactly once.
    const kept = r.kept.counts.map((c) => c.app);
    const refused = r.refused.counts.map((c) => c.app);
    expect([...apps(s.written), ...kept, ...refused].sort()).toEqual(counts.map((c) => c.app).sort());
    expect(kept.length).toBeGreaterThan(0);
  });
});
