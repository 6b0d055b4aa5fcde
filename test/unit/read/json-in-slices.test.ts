import { stringifyInSlices } from '../../../src/read/json-in-slices';
import { eachInSlices } from '../../../src/read/read-slices';

describe('stringifyInSlices', () => {
  it('writes the text JSON.stringify writes', async () => {
    const values: unknown[] = [
      { a: 1, points: Array.from({ length: 5000 }, (_, i) => ({ ts: i, v: i / 3, s: `x${i}`, n: null })) },
      { nested: { list: [1, 'two', null, undefined, { deep: [true, false] }], skip: undefined }, e: [] },
      [undefined, () => 1, Symbol('s'), NaN, -0, 'é"\\\n'],
      { date: new Date(0), map: new Map([[1, 2]]), toJSON: undefined },
      { withToJson: { toJSON: () => 'custom' } },
      'text',
      42,
      null,
    ];
    for (const value of values) {
      expect(await stringifyInSlices(value, () => Promise.resolve())).toBe(JSON.stringify(value));
    }
    expect(await stringifyInSlices(undefined, () => Promise.resolve())).toBeUndefined();
  });

  it('waits for a turn before each slice of a long array', async () => {
    let turns = 0;
    const items = Array.from({ length: 20_000 }, (_, i) => ({ i, text: 'x'.repeat(200) }));
    await stringifyInSlices({ items }, () => {
      turns++;
      return Promise.resolve();
    });
    expect(turns).toBeGreaterThan(1);
  });
});

describe('eachInSlices', () => {
  it('visits every item in order and stops when told', async () => {
    const seen: number[] = [];
    await eachInSlices(
      [1, 2, 3, 4],
      () => Promise.resolve(),
      (x) => {
        seen.push(x);
        return x < 3;
      },
    );
    expect(seen).toEqual([1, 2, 3]);
  });

  it('takes no turn for no item', async () => {
    let turns = 0;
    await eachInSlices(
      [],
      () => Promise.resolve(void turns++),
      () => undefined,
    );
    expect(turns).toBe(0);
  });
});
