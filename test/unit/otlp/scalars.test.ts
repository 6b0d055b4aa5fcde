import protobuf from 'protobufjs';
import { countOf, idHex, int64Text, nanosToMs } from '../../../src/otlp/scalars';

/** The Long class protobufjs decodes 64-bit integers into. */
const Long = protobuf.util.Long as unknown as typeof import('long');

describe('OTLP scalars in either encoding', () => {
  it('nanosecond times: decimal text, numbers and protobuf Longs alike, exact beyond 2^53', () => {
    const text = '1764590400123456789';
    expect(nanosToMs(text)).toBe(1764590400123);
    expect(nanosToMs(Long.fromString(text, true))).toBe(1764590400123);
    expect(nanosToMs(1764590400123000000)).toBe(1764590400123); // a JSON number: digits lost, ms kept
    expect(nanosToMs(5_000_000)).toBe(5);
    for (const absent of [undefined, null, 0, '0', '', 'x', Long.UZERO, -1, '-5000000'])
      expect(nanosToMs(absent)).toBe(0);
  });

  it('int64 text is canonical', () => {
    expect(int64Text('007')).toBe('7');
    expect(int64Text(Long.fromString('-9223372036854775808'))).toBe('-9223372036854775808');
    expect(int64Text({})).toBe('0');
  });

  it('counts are non-negative safe integers', () => {
    expect(countOf('3')).toBe(3);
    expect(countOf(Long.fromNumber(4, true))).toBe(4);
    expect(countOf(undefined)).toBe(0);
    expect(countOf(-1)).toBeNull();
    expect(countOf('18446744073709551615')).toBeNull();
  });

  it('ids: bytes or hex text; all-zero and non-hex are absent', () => {
    expect(idHex(Buffer.from('0af7651916cd43dd', 'hex'))).toBe('0af7651916cd43dd');
    expect(idHex('0AF7651916CD43DD')).toBe('0af7651916cd43dd');
    expect(idHex('0000000000000000')).toBe('');
    expect(idHex('not-hex')).toBe('');
    expect(idHex(42)).toBe('');
  });
});
