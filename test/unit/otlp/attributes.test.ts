import { AttributeBag } from '../../../src/otlp/attributes';
import { kv } from './fixtures';

const bounds = { maxAttributes: 6, maxKeyLength: 16, maxStringLength: 20 };

describe('attribute rule', () => {
  it('flattens every AnyValue kind into scalars, in order, the first of a key winning', () => {
    const bag = new AttributeBag({ ...bounds, maxAttributes: 32 });
    bag.set('trace_id', 'abc');
    bag.addKeyValues([
      kv('s', { stringValue: 'x' }),
      kv('b', { boolValue: true }),
      kv('i', { intValue: '42' }),
      kv('big', { intValue: '9007199254740993' }),
      kv('d', { doubleValue: 1.5 }),
      kv('arr', { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 2 }] } }),
      kv('map', {
        kvlistValue: {
          values: [
            kv('x', { stringValue: 'y' }),
            kv('n', { kvlistValue: { values: [kv('z', { boolValue: false })] } }),
          ],
        },
      }),
      kv('bytes', { bytesValue: Buffer.from([1, 2, 3]) }),
      kv('empty', {}),
      kv('s', { stringValue: 'second' }),
      kv('trace_id', { stringValue: 'theirs' }),
    ]);
    expect({ ...bag.toObject() }).toEqual({
      trace_id: 'abc',
      s: 'x',
      b: true,
      i: 42,
      big: '9007199254740993',
      d: 1.5,
      arr: '["a",2]',
      'map.x': 'y',
      'map.n.z': false,
      bytes: 'AQID',
    });
    expect(Object.getPrototypeOf(bag.toObject())).toBeNull();
  });

  it('cuts long strings, makes text storable, drops bad keys and non-finite numbers, and stops at the count limit', () => {
    const bag = new AttributeBag({ ...bounds, maxAttributes: 7 });
    bag.addKeyValues([
      kv('long', { stringValue: 'y'.repeat(50) }),
      kv('nul', { stringValue: 'a\u0000b' }),
      // The cut falls inside the emoji: it goes whole; a lone surrogate becomes U+FFFD.
      kv('pair', { stringValue: `${'p'.repeat(7)}😀${'q'.repeat(20)}` }),
      kv('lone', { stringValue: 'a\ud800b' }),
      kv('k\udc00', { stringValue: 'key not text' }),
      kv('k'.repeat(17), { stringValue: 'key too long' }),
      kv('__proto__', { stringValue: 'reserved' }),
      kv('', { stringValue: 'empty key' }),
      kv('nan', { doubleValue: 'NaN' }),
      kv('a', { intValue: 1 }),
      kv('b', { intValue: 2 }),
      kv('c', { intValue: 3 }),
      kv('d', { intValue: 4 }),
      kv('e', { intValue: 5 }),
    ]);
    const values = bag.toObject();
    expect(values.long).toHaveLength(20);
    expect(values.long).toMatch(/…\[truncated\]$/);
    expect(values.nul).toBe('a\uFFFDb');
    expect(values.pair).toBe('ppppppp…[truncated]');
    expect(values.lone).toBe('a\uFFFDb');
    // In code-unit order, as validation holds them.
    expect(Object.keys(values)).toEqual(['a', 'b', 'c', 'lone', 'long', 'nul', 'pair']);
    // key not text, key too long, __proto__, empty key, NaN, and 'd', 'e' past the limit
    expect(bag.dropped).toBe(7);
  });

  it('maps nested deeper than 4 levels are kept as JSON text', () => {
    let value: Record<string, unknown> = { stringValue: 'leaf' };
    for (let i = 0; i < 6; i++) value = { kvlistValue: { values: [kv('k', value)] } };
    const bag = new AttributeBag({ ...bounds, maxKeyLength: 64, maxStringLength: 1000 });
    bag.addKeyValues([kv('m', value)]);
    expect({ ...bag.toObject() }).toEqual({ 'm.k.k.k.k': '{"k":{"k":"leaf"}}' });
  });
});
