import type { EventLimits } from '../../../src/events/limits';
import { eventBytes } from '../../../src/events/event-size';
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
    // The estimate of an event built typed (the OTLP front) is the one validation makes.
    expect(eventBytes(v.event)).toBe(v.bytes);
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

  it.each(['__proto__', 'constructor', 'prototype'])(
    'refuses the reserved attribute key %s sent as raw JSON text, and nothing reaches a prototype',
    (key) => {
      const prototypeKeys = Object.getOwnPropertyNames(Object.prototype);
      // As the wire delivers it: JSON.parse makes an own property named `__proto__` (an object
      // literal here would set the literal's prototype instead and test nothing).
      const raw = JSON.parse(`{"id":"${base.id}","type":"log","name":"a","ts":${NOW},
        "source":{"app":"a","${key}":{"polluted":1}},"${key}":{"polluted":2},
        "attributes":{"ok":1,"${key}":{"polluted":3,"prototype":{"polluted":4}}}}`) as {
        attributes: object;
      };
      expect(Object.getOwnPropertyNames(raw.attributes)).toEqual(['ok', key]);

      expect(validateEvent(raw, limits, NOW)).toEqual({
        ok: false,
        rejection: { reason: 'attribute_key_invalid', field: `attributes.${key}` },
      });
      expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(prototypeKeys);
      const fresh: Record<string, unknown> = {};
      expect(fresh.polluted).toBeUndefined();
      expect(Object.getPrototypeOf(fresh)).toBe(Object.prototype);
    },
  );

  it('keeps prototype keys outside attributes inert: the event carries exactly what the contract reads', () => {
    const raw: unknown = JSON.parse(`{"id":"${base.id}","type":"error","name":"a","ts":${NOW},
      "__proto__":{"polluted":1,"type":"metric"},"constructor":{"prototype":{"polluted":2}},
      "source":{"app":"a","__proto__":{"env":"polluted"}},
      "error":{"message":"m","__proto__":{"kind":"polluted"}},"attributes":{"ok":1}}`);
    const v = validateEvent(raw, limits, NOW);
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    expect(v.event.type).toBe('error');
    expect(v.event.env).toBeNull();
    expect(v.event.error).toEqual({ message: 'm', kind: null, stack: null });
    expect(Object.getPrototypeOf(v.event.attributes)).toBeNull();
    expect(Object.keys(v.event.attributes)).toEqual(['ok']);
    expect(Object.keys(v.event).sort()).toEqual([
      'app',
      'attributes',
      'env',
      'error',
      'id',
      'message',
      'name',
      'summary',
      'ts',
      'type',
      'value',
      'version',
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses metric values whose rollup sums could leave the double range, naming the field', () => {
    const summary = (s: object) => ({ ...base, value: undefined, summary: s });
    const refused = (raw: unknown) => validateEvent(raw, limits, NOW);
    expect(refused({ ...base, value: 1.7e308 })).toEqual({
      ok: false,
      rejection: { reason: 'value_out_of_range', field: 'value' },
    });
    expect(reason({ ...base, value: -1.01e300 })).toBe('value_out_of_range');
    expect(reason({ ...base, value: 1e300 })).toBeUndefined();
    expect(reason({ ...base, value: -1e300 })).toBeUndefined();
    // A summary of samples within the bound: min and max within it, the sum within count × bound.
    expect(reason(summary({ count: 3, min: 1e300, max: 1e300, sum: 3e300, avg: 1e300 }))).toBeUndefined();
    expect(refused(summary({ count: 2, min: 1, max: 2e300, sum: 2e300 + 1, avg: (2e300 + 1) / 2 }))).toEqual({
      ok: false,
      rejection: { reason: 'value_out_of_range', field: 'summary.max' },
    });
    expect(refused(summary({ count: 2, min: -1e301, max: 0, sum: -1e301, avg: -1e301 / 2 }))).toEqual({
      ok: false,
      rejection: { reason: 'value_out_of_range', field: 'summary.min' },
    });
    expect(refused(summary({ count: 2, min: 1, max: 1, sum: 1.7e308, avg: 1.7e308 / 2 }))).toEqual({
      ok: false,
      rejection: { reason: 'value_out_of_range', field: 'summary.sum' },
    });
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

  describe('nothing is changed silently', () => {
    const LONE_HIGH = '\ud83d';
    const LONE_LOW = '\ude80';

    it.each<[string, unknown, string, string]>([
      [
        'a lone surrogate in a log message',
        { ...base, type: 'log', message: `a${LONE_HIGH}b` },
        'message_invalid',
        'message',
      ],
      [
        'a lone surrogate in source.app',
        { ...base, source: { app: `a${LONE_LOW}` } },
        'source_invalid',
        'source.app',
      ],
      [
        'a lone surrogate in source.env',
        { ...base, source: { app: 'a', env: LONE_LOW } },
        'source_field_invalid',
        'source.env',
      ],
      [
        'a lone surrogate in an error message',
        { ...base, type: 'error', value: undefined, error: { message: `x${LONE_HIGH}` } },
        'error_invalid',
        'error',
      ],
      [
        'a lone surrogate in error.kind',
        { ...base, type: 'error', value: undefined, error: { message: 'm', kind: LONE_LOW } },
        'error_invalid',
        'error.kind',
      ],
      [
        'a lone surrogate in an attribute key',
        { ...base, attributes: { [`k${LONE_HIGH}`]: 1 } },
        'attribute_key_invalid',
        `attributes.k${LONE_HIGH}`,
      ],
      [
        'a lone surrogate in an attribute value',
        { ...base, attributes: { k: `${LONE_LOW}v` } },
        'attribute_value_invalid',
        'attributes.k',
      ],
      [
        'a message that is not a string',
        { ...base, type: 'log', message: { text: 'hi' } },
        'message_invalid',
        'message',
      ],
      [
        'a summary whose avg is not sum / count',
        { ...base, value: undefined, summary: { count: 3, min: 0, max: 2, sum: 3, avg: 1.5 } },
        'summary_invalid',
        'summary.avg',
      ],
      [
        'a summary avg off by one unit in the last place',
        { ...base, value: undefined, summary: { count: 3, min: 0, max: 1, sum: 1, avg: 1 / 3 + 2 ** -54 } },
        'summary_invalid',
        'summary.avg',
      ],
    ])('refuses %s, naming the field', (_label, raw, reasonCode, field) => {
      expect(validateEvent(raw, limits, NOW)).toEqual({
        ok: false,
        rejection: { reason: reasonCode, field },
      });
    });

    it('keeps a well-formed surrogate pair and a summary whose avg is sum / count exactly', () => {
      const v = validateEvent(
        {
          ...base,
          value: undefined,
          summary: { count: 3, min: 0, max: 1, sum: 1, avg: 1 / 3 },
          message: 'rocket 🚀',
          attributes: { '🚀': '🚀' },
        },
        limits,
        NOW,
      );
      expect(v.ok).toBe(true);
      if (!v.ok) return;
      expect(v.event.summary).toEqual({ count: 3, min: 0, max: 1, sum: 1, avg: 1 / 3 });
      expect(v.event.message).toBe('rocket 🚀');
      expect(v.event.attributes).toEqual(Object.assign(Object.create(null), { '🚀': '🚀' }));
    });

    it.each([0, 1, 2, 3])(
      'cuts a long stack without splitting a surrogate pair (pair at offset %i)',
      (shift) => {
        // maxStackLength 64: the marker takes 12 code units, so 52 are kept; move a pair across that edge.
        const stack = 'a'.repeat(50 + shift) + '🚀'.repeat(20);
        const v = validateEvent(
          { ...base, type: 'error', value: undefined, error: { message: 'm', stack } },
          limits,
          NOW,
        );
        expect(v.ok).toBe(true);
        if (!v.ok) return;
        const kept = v.event.error?.stack ?? '';
        expect(kept.endsWith('…[truncated]')).toBe(true);
        expect(kept.length).toBeLessThanOrEqual(64);
        expect((kept as unknown as { isWellFormed(): boolean }).isWellFormed()).toBe(true);
        expect(stack.startsWith(kept.slice(0, -'…[truncated]'.length))).toBe(true);
      },
    );

    it('refuses only a stack whose kept part is not text: what is cut off does not matter', () => {
      const error = (stack: string) => ({
        ...base,
        type: 'error',
        value: undefined,
        error: { message: 'm', stack },
      });
      expect(validateEvent(error('s'.repeat(70) + LONE_HIGH), limits, NOW).ok).toBe(true);
      expect(validateEvent(error(`s${LONE_HIGH}s`), limits, NOW)).toEqual({
        ok: false,
        rejection: { reason: 'error_invalid', field: 'error.stack' },
      });
    });

    it('cuts a rejected attribute key in the field it names', () => {
      const key = 'k'.repeat(100_000);
      const v = validateEvent({ ...base, attributes: { [key]: 1 } }, limits, NOW);
      expect(v.ok).toBe(false);
      if (v.ok) return;
      expect(v.rejection.reason).toBe('attribute_key_invalid');
      expect(v.rejection.field).toBe(`attributes.${'k'.repeat(63)}…`);
    });
  });
});
