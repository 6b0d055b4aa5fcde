import { exceedsJsonDepth } from '../../../src/http/json-depth';

describe('exceedsJsonDepth', () => {
  it('counts nesting of arrays and objects', () => {
    expect(exceedsJsonDepth('{"a":[{"b":{}}]}', 4)).toBe(false);
    expect(exceedsJsonDepth('{"a":[{"b":{"c":[]}}]}', 4)).toBe(true);
  });

  it('ignores brackets inside strings, including escaped quotes', () => {
    expect(exceedsJsonDepth('{"a":"[[[[[[{{{{\\"[[[["}', 1)).toBe(false);
  });

  it('stops early on a hostile body', () => {
    expect(exceedsJsonDepth('['.repeat(1_000_000), 8)).toBe(true);
  });
});
