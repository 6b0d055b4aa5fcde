import { IsolatingFold } from '../../../src/storage/fold-isolation';

/** A data error as PostgreSQL raises it (SQLSTATE 22003, numeric value out of range). */
const outOfRange = Object.assign(new Error('bigint out of range'), { code: '22003' });

/** Drives a fold over `count` buckets where the buckets in `bad` fail whatever range holds them. */
function run(
  count: number,
  bad: ReadonlySet<number>,
): { skipped: number[]; folded: number[]; folds: number } {
  const fold = new IsolatingFold(count);
  const folded: number[] = [];
  let folds = 0;
  for (let range = fold.next(); range !== null; range = fold.next()) {
    folds++;
    const indices = Array.from({ length: range.to - range.from }, (_, k) => range.from + k);
    if (indices.some((i) => bad.has(i))) fold.failed(outOfRange);
    else {
      folded.push(...indices);
      fold.folded({ rows1m: indices.length, rows1h: 0 });
    }
  }
  expect(fold.rows1m).toBe(folded.length);
  return { skipped: fold.skipped.map((s) => s.index), folded, folds };
}

describe('IsolatingFold', () => {
  it('folds everything in one range when nothing fails', () => {
    expect(run(20_000, new Set())).toEqual({
      skipped: [],
      folded: Array.from({ length: 20_000 }, (_, i) => i),
      folds: 1,
    });
  });

  it('skips exactly the failing buckets, folds every other one once, in O(k log n) folds', () => {
    const bad = new Set([0, 7_777, 19_999]);
    const { skipped, folded, folds } = run(20_000, bad);
    expect(skipped.sort((a, b) => a - b)).toEqual([0, 7_777, 19_999]);
    expect(folded.sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20_000 }, (_, i) => i).filter((i) => !bad.has(i)),
    );
    expect(folds).toBeLessThanOrEqual(1 + 2 * 3 * Math.ceil(Math.log2(20_000)));
    expect(run(1, new Set([0])).skipped).toEqual([0]);
  });

  it('rethrows a failure that is not the rows’ fault (connection lost, timeout): the run fails', () => {
    const fold = new IsolatingFold(10);
    const lost = new Error('Connection terminated unexpectedly');
    expect(() => fold.failed(lost)).toThrow(lost);
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), {
      code: '57014',
    });
    expect(() => fold.failed(timeout)).toThrow(timeout);
    const overflow = Object.assign(new Error('integer overflow'), { code: 'SQLITE_ERROR' });
    expect(() => fold.failed(overflow)).not.toThrow();
  });
});
