import { decodeCursor, encodeCursor } from '../../../src/http/event-cursor';
import { QueryParams } from '../../../src/http/query-params';
import { isJsonContentType } from '../../../src/http/read-body';
import { SluiceError } from '../../../src/errors/catalogue';

const ID = '0190f3c2-0000-7000-8000-000000000001';
const cursorOf = (text: string): string => Buffer.from(text).toString('base64url');

describe('isJsonContentType', () => {
  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset="utf-8"',
    'application/json;charset="UTF-8"',
    'APPLICATION/JSON; Charset=UTF-8',
    'application/json; charset="utf-8"; foo=bar',
  ])('takes %s', (header) => {
    expect(isJsonContentType(header)).toBe(true);
  });

  it.each([
    undefined,
    'text/plain',
    'application/json; charset=latin1',
    'application/json; charset="utf-16"',
    'application/json; charset="utf-8',
    'application/jsonx',
  ])('refuses %s', (header) => {
    expect(isJsonContentType(header)).toBe(false);
  });
});

describe('event cursor', () => {
  it('round-trips a position', () => {
    expect(decodeCursor(encodeCursor({ ts: 1_764_590_400_123, id: ID }))).toEqual({
      ts: 1_764_590_400_123,
      id: ID,
    });
  });

  it.each([
    ['dashes where the uuid is', `1:${'-'.repeat(36)}`],
    ['hyphens misplaced', `1:0190f3c20-000-7000-8000-000000000001`],
    ['upper case', `1:${ID.toUpperCase()}`],
    ['ts past the Date range', `9000000000000000:${ID}`],
    ['no ts', `:${ID}`],
    ['trailing text', `1:${ID}x`],
  ])('refuses %s', (_label, text) => {
    expect(decodeCursor(cursorOf(text))).toBeNull();
  });
});

describe('QueryParams', () => {
  const message = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(SluiceError);
      expect((err as SluiceError).code).toBe('invalid_parameter');
      return (err as Error).message;
    }
    throw new Error('expected invalid_parameter');
  };

  it.each([
    ['NUL', 'a\u0000b'],
    ['a lone surrogate', 'a\ud800'],
  ])('refuses a value with %s, naming the parameter', (_label, value) => {
    expect(message(() => new QueryParams({ app: value }, ['app']).string('app'))).toContain('"app"');
  });

  it('refuses a malformed cursor, naming it', () => {
    const q = new QueryParams({ cursor: cursorOf(`1:${'-'.repeat(36)}`) }, ['cursor']);
    expect(message(() => q.cursor('cursor'))).toContain('"cursor"');
  });

  it('cuts an unknown parameter name it echoes', () => {
    const text = message(() => new QueryParams({ ['k'.repeat(10_000)]: '1' }, ['app']));
    expect(text).toContain(`"${'k'.repeat(63)}…"`);
    expect(text.length).toBeLessThan(200);
  });
});
