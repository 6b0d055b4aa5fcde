import { decodeMetricCursor, encodeMetricCursor } from '../../../src/http/metric-cursor';

describe('metric cursors', () => {
  const id = '0190f3c2-7f00-7000-8000-000000000001';

  it('round-trips a raw position and a bucket position, each for its own resolution', () => {
    const raw = encodeMetricCursor('raw', { ts: 1764590400123, key: id });
    expect(decodeMetricCursor('raw', raw)).toEqual({ ts: 1764590400123, key: id });
    const bucket = encodeMetricCursor('1m', { ts: 1764590400000, key: 'web:shop ünïcode' });
    expect(decodeMetricCursor('1m', bucket)).toEqual({ ts: 1764590400000, key: 'web:shop ünïcode' });
    expect(decodeMetricCursor('1h', bucket)).toBeNull();
    expect(decodeMetricCursor('1m', raw)).toBeNull();
  });

  it.each([
    ['not base64 of a cursor', 'garbage'],
    ['a raw key that is no uuid', Buffer.from('raw:1:not-a-uuid').toString('base64url')],
    ['a time past a Date', Buffer.from(`raw:9999999999999999:${id}`).toString('base64url')],
    ['a key with U+0000', Buffer.from('1m:1:a\u0000b').toString('base64url')],
    ['an empty key', Buffer.from('1m:1:').toString('base64url')],
    ['a key over 128 characters', Buffer.from(`1m:1:${'a'.repeat(129)}`).toString('base64url')],
  ])('refuses %s', (_what, cursor) => {
    expect(decodeMetricCursor(cursor.startsWith('cmF3') ? 'raw' : '1m', cursor)).toBeNull();
  });
});
