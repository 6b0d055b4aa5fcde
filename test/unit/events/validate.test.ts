import type { EventLimits } from '../../../src/events/limits';
import { validateEvent } from '../../../src/events/validate';

const NOW = 1_764_590_400_000;
const limits: EventLimits = {
  maxAttributes: 4,
  maxAttributeKeyLength: 16,
  maxStringLength: 32,
  maxStackLength: 64,
  maxNameLength: 40,
  maxSourceLength: 20,
  maxAgeMs: 7 * 86_400_000,
  maxFutureMs: 300_000,
};
const base = {
  id: '0190F3C2-0000-7000-8000-000000000001',
  type: 'metric',
  name: 'render.frame_drop',
  ts: NOW,
  source: { app: 'web-shop', version: '1.4.2' },
  value: 3,
};

function reason(raw: unknown): string | undefined {
  const v = validateEvent(raw, limits, NOW);
  return v.ok ? undefined : v.rejection.reason;
}

describe('validateEvent', () => {
  it('normalises a valid metric (lower-case id, null-prototype attributes)', () => {
    const v = validateEvent({ ...base, attributes: { route: '/checkout', n: 2, ok: true } }, limits, NOW);
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    expect(v.event.id).toBe('0190f3c2-0000-7000-8000-000000000001');
    expect(v.event.app).toBe('web-shop');
    expect(v.event.version).toBe('1.4.2');
    expect(v.event.env).toBeNull();
    expect(Object.getPrototypeOf(v.event.attributes)).toBeNull();
    expect(v.bytes).toBeGreaterThan(0);
  });

  it.each<[string, unknown, string]>([
    ['not an object', 42, 'not_an_object'],
    ['array', [], 'not_an_object'],
    ['bad id', { ...base, id: 'x' }, 'id_invalid'],
    ['bad type', { ...base, type: 'trace' }, 'type_invalid'],
    ['bad name', { ...base, name: 'a..b' }, 'name_invalid'],
    ['long name', { ...base, name: 'a'.repeat(41) }, 'name_too_long'],
    ['float ts', { ...base, ts: NOW + 0.5 }, 'ts_invalid'],
    ['string ts', { ...base, ts: String(NOW) }, 'ts_invalid'],
    ['old ts', { ...base, ts: NOW - 8 * 86_400_000 }, 'ts_out_of_range'],
    ['future ts', { ...base, ts: NOW + 300_001 }, 'ts_out_of_range'],
    ['no source', { ...base, source: undefined }, 'source_invalid'],
    ['empty app', { ...base, source: { app: '' } }, 'source_invalid'],
    ['long app', { ...base, source: { app: 'a'.repeat(21) } }, 'source_invalid'],
    ['numeric version', { ...base, source: { app: 'a', version: 1 } }, 'source_field_invalid'],
    ['metric without value', { ...base, value: undefined }, 'value_invalid'],
    ['NaN-like value', { ...base, value: 'NaN' }, 'value_invalid'],
    [
      'value and summary',
      { ...base, summary: { count: 1, min: 1, max: 1, sum: 1, avg: 1 } },
      'value_invalid',
    ],
    [
      'bad summary',
      { ...base, value: undefined, summary: { count: 0, min: 1, max: 1, sum: 1, avg: 1 } },
      'summary_invalid',
    ],
    [
      'min > max',
      { ...base, value: undefined, summary: { count: 2, min: 3, max: 1, sum: 4, avg: 2 } },
      'summary_invalid',
    ],
    ['error without detail', { ...base, type: 'error', value: undefined }, 'error_invalid'],
    ['long error message', { ...base, type: 'error', error: { message: 'm'.repeat(33) } }, 'error_invalid'],
    ['long log message', { ...base, type: 'log', message: 'm'.repeat(33) }, 'message_invalid'],
    ['NUL in message', { ...base, type: 'log', message: 'a\u0000b' }, 'message_invalid'],
    ['array attributes', { ...base, attributes: ['a'] }, 'attributes_invalid'],
    ['too many attributes', { ...base, attributes: { a: 1, b: 2, c: 3, d: 4, e: 5 } }, 'attributes_too_many'],
    ['long key', { ...base, attributes: { ['k'.repeat(17)]: 1 } }, 'attribute_key_invalid'],
    ['nested value', { ...base, attributes: { a: { b: 1 } } }, 'attribute_value_invalid'],
    ['long value', { ...base, attributes: { a: 'v'.repeat(33) } }, 'attribute_value_invalid'],
    ['infinite value', { ...base, attributes: { a: Infinity } }, 'attribute_value_invalid'],
  ])('rejects %s', (_label, raw, expected) => {
    expect(reason(raw)).toBe(expected);
  });

  it.each(['__proto__', 'constructor', 'prototype'])('rejects the reserved attribute key %s', (key) => {
    const raw = JSON.parse(`{"id":"${base.id}","type":"log","name":"a","ts":${NOW},"source":{"app":"a"},
      "attributes":{"${key}":{"polluted":true}}}`);
    expect(reason(raw)).toBe('attribute_key_invalid');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('accepts a summary and an error with a truncated stack', () => {
    const s = validateEvent(
      { ...base, value: undefined, summary: { count: 2, min: 1, max: 3, sum: 4, avg: 2 } },
      limits,
      NOW,
    );
    expect(s.ok && s.event.summary).toEqual({ count: 2, min: 1, max: 3, sum: 4, avg: 2 });
    const e = validateEvent(
      { ...base, type: 'error', value: undefined, error: { message: 'boom', stack: 's'.repeat(500) } },
      limits,
      NOW,
    );
    expect(e.ok).toBe(true);
    if (e.ok) {
      expect(e.event.error?.stack?.length).toBe(64);
      expect(e.event.error?.stack?.endsWith('…[truncated]')).toBe(true);
      expect(e.event.value).toBeNull();
    }
  });
});
