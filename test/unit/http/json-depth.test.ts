import { exceedsJsonDepth } from '../../../src/http/json-depth';

describe('exceedsJsonDepth', () => {
  it('counts nesting of arrays and objects', () => {
    expect(exceedsJsonDepth(JSON.parse('{"a":[{"b":{}}]}'), 4)).toBe(false);
    expect(exceedsJsonDepth(JSON.parse('{"a":[{"b":{"c":[]}}]}'), 4)).toBe(true);
    expect(exceedsJsonDepth(JSON.parse('[1,"x",true,null]'), 1)).toBe(false);
    expect(exceedsJsonDepth(JSON.parse('[1,[2]]'), 1)).toBe(true);
  });

  it('does not count brackets inside strings', () => {
    expect(exceedsJsonDepth(JSON.parse('{"a":"[[[[[[{{{{\\"[[[["}'), 1)).toBe(false);
  });

  it('answers a hostile body after maxDepth levels', () => {
    const deep = JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`) as unknown;
    expect(exceedsJsonDepth(deep, 8)).toBe(true);
    expect(exceedsJsonDepth(42, 0)).toBe(false);
  });
});
