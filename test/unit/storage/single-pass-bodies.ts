import fc from 'fast-check';
import type { EventLimits } from '../../../src/events/limits';
import { rejectedEvent } from '../events/rejected-events';

/** Generated `POST /v1/events` bodies for the single-pass tests: valid, near-valid and hostile. */

export const NOW = 1_764_590_400_000;

/**
 * Limits small enough that generated values reach them, each text bound unlike the others: a field
 * read against another field's bound gives another answer.
 */
export const SMALL_LIMITS: EventLimits = {
  maxAttributes: 4,
  maxAttributeKeyLength: 6,
  maxStringLength: 12,
  maxStackLength: 20,
  maxNameLength: 10,
  maxSourceLength: 8,
  maxAgeMs: 7 * 86_400_000,
  maxFutureMs: 300_000,
};

/** Text with what JSON and storage make hard: escapes, control characters, NUL, surrogates (paired and lone), wide characters. */
const text = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('web-shop', 'a', 'prod', '1.4.2', 'GET', '/checkout', 'x.y') },
  { weight: 2, arbitrary: fc.string({ maxLength: 14 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 14 }) },
  {
    weight: 2,
    arbitrary: fc
      .array(
        fc.constantFrom(
          'a',
          'Z',
          '\n',
          '\t',
          '\r',
          '\\',
          '"',
          '/',
          '\u0000',
          '\u0008',
          '\u001f',
          'é',
          '€',
          '😀',
          '\ud800',
          '\udc00',
          '\u2028',
          '\ue000',
          '\uffff',
          ' ',
        ),
        { maxLength: 14 },
      )
      .map((parts) => parts.join('')),
  },
  { weight: 1, arbitrary: fc.string({ minLength: 15, maxLength: 30 }) },
);

const number = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true }),
  fc.constantFrom(0, -0, 1e300, -1e300, 1e301, 1e21, 1e15, Number('123456789012345678'), 0.1, 5e-324, 2.5),
);

const uuid = fc.oneof(
  fc.uuid().map((u) => u),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.constantFrom('not-a-uuid', '0190f3c2-0000-7000-8000-00000000000g', ''),
);

const attributeKey = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.constantFrom('route', 'method', 'status', 'a', 'b', 'zz', 'é', '😀', '\ue000', '10', '9'),
  },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', '', 'toolongkey') },
  { weight: 1, arbitrary: text },
);
const attributeValue = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 3, arbitrary: number },
  { weight: 2, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constantFrom(null, { nested: 1 }, [1]) },
);

const maybe = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: 3, arbitrary: a }, { weight: 1, arbitrary: fc.constant(undefined) });
const orNull = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | null | undefined> =>
  fc.oneof(
    { weight: 4, arbitrary: a },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );

const summary = fc.oneof(
  fc
    .record({
      count: fc.integer({ min: 1, max: 10 }),
      min: fc.integer({ min: -50, max: 0 }),
      max: fc.integer({ min: 0, max: 50 }),
      sum: number,
    })
    .map((s) => ({ ...s, avg: s.sum / s.count })),
  fc.record({ count: number, min: number, max: number, sum: number, avg: number }),
  fc.constantFrom('x', 3, null, { count: 1 }),
);

const event = fc
  .record(
    {
      id: uuid,
      type: fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom('metric', 'log', 'lifecycle', 'error') },
        { weight: 1, arbitrary: fc.constantFrom('Metric', 'trace', 3) },
      ),
      name: fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom('render.frame_drop', 'a', 'a.b-c_d', 'db.pool.wait') },
        { weight: 1, arbitrary: fc.constantFrom('', '.a', 'a..b', 'a.', 'naïve', 'very.long.name.x') },
        { weight: 1, arbitrary: text },
      ),
      ts: fc.oneof(
        { weight: 6, arbitrary: fc.integer({ min: NOW - 7 * 86_400_000, max: NOW + 300_000 }) },
        {
          weight: 1,
          arbitrary: fc.constantFrom(NOW - 8 * 86_400_000, NOW + 400_000, NOW + 0.5, 2 ** 60, '1', null),
        },
      ),
      source: fc.oneof(
        {
          weight: 8,
          arbitrary: fc.record(
            { app: text, version: orNull(text), env: orNull(text), extra: maybe(number) },
            { requiredKeys: ['app'] },
          ),
        },
        { weight: 1, arbitrary: fc.constantFrom(null, 'x', { version: '1' }, { app: 3 }) },
      ),
      value: orNull(
        fc.oneof({ weight: 5, arbitrary: number }, { weight: 1, arbitrary: fc.constantFrom('1', true) }),
      ),
      summary: maybe(summary),
      error: orNull(
        fc.oneof(
          fc.record(
            {
              message: text,
              kind: orNull(text),
              stack: orNull(fc.oneof(text, fc.string({ minLength: 18, maxLength: 40 }), fc.constant(3))),
            },
            { requiredKeys: [] },
          ),
          fc.constantFrom('boom', 7),
        ),
      ),
      message: orNull(fc.oneof({ weight: 5, arbitrary: text }, { weight: 1, arbitrary: fc.constant(12) })),
      attributes: orNull(
        fc.oneof(
          { weight: 6, arbitrary: fc.dictionary(attributeKey, attributeValue, { maxKeys: 6 }) },
          { weight: 1, arbitrary: fc.constantFrom('x', [1], 2) },
        ),
      ),
      unknown: maybe(fc.jsonValue({ maxDepth: 2 })),
    },
    { requiredKeys: ['id', 'type', 'name', 'ts', 'source'] },
  )
  .map((e) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(e)) if (v !== undefined) out[k] = v;
    return out;
  });

const plainText = fc.oneof(
  fc.constantFrom(
    'web-shop',
    'a',
    'prod',
    '1.4.2',
    '/checkout',
    'naïve €',
    '😀',
    'line\nbreak',
    'tab\there',
    'q"\\',
  ),
  fc.string({ maxLength: 8 }),
);

/** Events the contract takes (under either limit set, mostly): what the fast path must write exactly. */
const cleanEvent = fc
  .record(
    {
      id: fc.uuid(),
      type: fc.constantFrom('metric', 'metric', 'log', 'lifecycle', 'error'),
      name: fc.constantFrom('render.frame_drop', 'a', 'a.b-c_d', 'db.pool'),
      ts: fc.integer({ min: NOW - 86_400_000, max: NOW + 1000 }),
      source: fc.record(
        {
          app: fc.constantFrom('web-shop', 'ios', 'é-app'),
          version: orNull(plainText),
          env: orNull(fc.constantFrom('prod', 'staging')),
        },
        { requiredKeys: ['app'] },
      ),
      value: fc.oneof(
        fc.integer({ min: -1e6, max: 1e6 }),
        fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e300, max: 1e300 }),
      ),
      error: fc.record(
        { message: plainText, kind: orNull(plainText), stack: orNull(plainText) },
        { requiredKeys: ['message'] },
      ),
      message: orNull(plainText),
      attributes: fc.dictionary(
        fc.constantFrom('route', 'method', 'status', 'host', 'a', 'b', 'é', '10', '9'),
        fc.oneof(plainText, number, fc.boolean()),
        { maxKeys: 4 },
      ),
    },
    { requiredKeys: ['id', 'type', 'name', 'ts', 'source'] },
  )
  .map((e) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(e)) if (v !== undefined) out[k] = v;
    return out;
  });

const element = fc.oneof(
  { weight: 12, arbitrary: cleanEvent },
  { weight: 12, arbitrary: event },
  { weight: 4, arbitrary: rejectedEvent },
  { weight: 1, arbitrary: fc.constantFrom(null, 3, 'x', [], {}) },
);

/** How a body is written: JSON.stringify's own text, or with whitespace, `\u` escapes and other number forms. */
interface Style {
  readonly space: string;
  readonly escapeAll: boolean;
  readonly exponents: boolean;
  readonly member: (key: string) => string;
}

function writeString(s: string, style: Style): string {
  const json = JSON.stringify(s);
  if (!style.escapeAll) return json;
  let out = '"';
  for (const ch of json.slice(1, -1).split('')) {
    const c = ch.charCodeAt(0);
    // Not the key `events` itself: a body whose envelope key is escaped is one the pass leaves whole.
    out += c > 0x7e || c === 0x2f ? `\\u${c.toString(16).padStart(4, '0')}` : ch;
  }
  return `${out}"`;
}

function writeJson(v: unknown, style: Style): string {
  const { space } = style;
  if (typeof v === 'string') return writeString(v, style);
  if (typeof v === 'number') {
    const plain = JSON.stringify(v);
    if (!style.exponents || !Number.isFinite(v) || v === 0) return plain;
    // Other spellings of the same value: `1e+3`, `2.50`, seventeen digits.
    if (Number.isInteger(v)) return Math.abs(v) < 1e6 && v % 2 === 0 ? `${plain}.0` : v.toExponential();
    return v.toPrecision(17);
  }
  if (Array.isArray(v))
    return `[${space}${v.map((x) => writeJson(x, style)).join(`${space},${space}`)}${space}]`;
  if (v !== null && typeof v === 'object') {
    const parts = Object.entries(v)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => `${style.member(writeString(k, style))}${space}:${space}${writeJson(x, style)}`);
    return `{${space}${parts.join(`,${space}`)}${space}}`;
  }
  return JSON.stringify(v);
}

const style: fc.Arbitrary<Style> = fc.record({
  space: fc.constantFrom('', '', '', ' ', '\n\t ', '\r\n'),
  escapeAll: fc.oneof(
    { weight: 3, arbitrary: fc.constant(false) },
    { weight: 1, arbitrary: fc.constant(true) },
  ),
  exponents: fc.oneof(
    { weight: 3, arbitrary: fc.constant(false) },
    { weight: 1, arbitrary: fc.constant(true) },
  ),
  member: fc.constant((k: string) => k),
});

/** Valid envelopes of generated events, written in any style. */
export const bodyArbitrary: fc.Arbitrary<Buffer> = fc
  .tuple(fc.array(element, { maxLength: 8 }), style)
  .map(([events, s]) => Buffer.from(`${s.space}${writeJson({ events }, s)}${s.space}`));

/** A valid body with one change: a byte replaced, a cut, a byte inserted, or a member written twice. */
export const nearValidBody: fc.Arbitrary<Buffer> = fc
  .tuple(
    bodyArbitrary,
    fc.nat(),
    fc.constantFrom(...'{}[],:"\\ 0-1eE.tfn\u0000x'.split('')),
    fc.integer({ min: 0, max: 3 }),
  )
  .map(([body, at, ch, how]) => {
    const s = body.toString('utf8');
    const i = s.length === 0 ? 0 : at % s.length;
    if (how === 0) return Buffer.from(s.slice(0, i) + ch + s.slice(i + 1));
    if (how === 1) return Buffer.from(s.slice(0, i));
    if (how === 2) return Buffer.from(s.slice(0, i) + ch + s.slice(i));
    // A member again: the second one wins in JSON.parse.
    return Buffer.from(s.replace(/"(type|value|name)":/, (m) => `"${m.slice(1, -2)}":"log",${m}`));
  });

/** Bytes of JSON's alphabet, and envelopes around them. */
export const hostileBody: fc.Arbitrary<Buffer> = fc
  .array(
    fc.constantFrom(
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"',
      '\\',
      'u',
      '0',
      '1',
      '-',
      'e',
      '.',
      ' ',
      'events',
      'null',
      'true',
      'id',
      '"events":[',
      '{"events":[',
    ),
    { maxLength: 40 },
  )
  .map((parts) => Buffer.from(parts.join('')));
