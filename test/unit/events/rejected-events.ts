import fc from 'fast-check';
import type { INTAKE_REJECTION_REASONS, RejectionReason } from '../../../src/events/rejection';

/**
 * Events that validation refuses, one generator per reason of the catalogue it gives: each is a
 * valid event with one field broken, past the default limits and the small ones of the single-pass
 * tests alike. The map is total over the reasons, so a reason added to the catalogue does not
 * compile here until it has events that reach it.
 */

const NOW = 1_764_590_400_000;
const DAY = 86_400_000;

type ContractReason = Exclude<RejectionReason, (typeof INTAKE_REJECTION_REASONS)[number]>;

const valid = {
  id: '0190f3c2-0000-7000-8000-000000000001',
  type: 'log',
  name: 'a.b',
  ts: NOW,
  source: { app: 'web-shop' },
};
const metric = { ...valid, type: 'metric', value: 1 };
const errorEvent = { ...valid, type: 'error', error: { message: 'boom' } };

/** Text past every limit a test uses (the default limits stop at 1024, stacks aside). */
const longText = (min: number): fc.Arbitrary<string> =>
  fc.integer({ min, max: min + 40 }).map((n) => 'x'.repeat(n));

/** Strings no storage holds as sent: U+0000, lone surrogates. */
const unstorable = fc.constantFrom('a\u0000', '\ud800', 'x\udc00y', '\udbff\u0000');

/** A UUID with one character swapped for one its position does not take. */
const brokenUuid = fc
  .tuple(fc.uuid(), fc.nat(35), fc.constantFrom('g', 'G', 'z', '-', '_', ' ', 'é', '.'))
  .map(([uuid, at, ch]) => {
    const dash = at === 8 || at === 13 || at === 18 || at === 23;
    return uuid.slice(0, at) + (dash ? (ch === '-' ? '0' : ch) : ch === '-' ? 'g' : ch) + uuid.slice(at + 1);
  });

/** Text of name characters and others, refused as a dotted name. */
const brokenName = fc.oneof(
  fc.constantFrom('', '.', '.a', 'a.', 'a..b', 'naïve', 'a b', 'a/b', 'a:b', 'a.b.', '😀', 'a\u0000'),
  fc
    .array(fc.constantFrom('a', 'Z', '0', '_', '-', '.', '.', ' ', 'é', '$'), { minLength: 1, maxLength: 10 })
    .map((parts) => parts.join(''))
    .filter((s) => !/^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/.test(s) && s.length <= 12),
);

const BY_REASON: { readonly [R in ContractReason]: fc.Arbitrary<unknown> } = {
  not_an_object: fc.constantFrom(null, 3, 'x', true, [], [valid]),
  id_invalid: fc
    .oneof(brokenUuid, fc.constantFrom('', 'not-a-uuid', 7, null, `${valid.id}0`, valid.id.slice(1)))
    .map((id) => ({ ...valid, id })),
  type_invalid: fc
    .constantFrom('Metric', 'trace', '', 'logs', 'erro', 3, null, ['log'])
    .map((type) => ({ ...valid, type })),
  name_invalid: brokenName.map((name) => ({ ...valid, name })),
  name_too_long: fc.integer({ min: 65, max: 90 }).map((n) => ({ ...valid, name: `${'a.'.repeat(n)}b` })),
  ts_invalid: fc.constantFrom(NOW + 0.5, String(NOW), null, true, 2 ** 60).map((ts) => ({ ...valid, ts })),
  ts_out_of_range: fc
    .oneof(fc.integer({ min: 0, max: NOW - 8 * DAY }), fc.integer({ min: NOW + 301_000, max: NOW + DAY }))
    .map((ts) => ({ ...valid, ts })),
  source_invalid: fc
    .oneof(
      fc.constantFrom(null, 'web-shop', [], { version: '1' }, { app: 3 }, { app: '' }),
      longText(129).map((app) => ({ app })),
      unstorable.map((app) => ({ app })),
    )
    .map((source) => ({ ...valid, source })),
  source_field_invalid: fc
    .oneof(fc.constantFrom(1, true, {}), longText(129), unstorable)
    .chain((v) => fc.constantFrom({ app: 'a', version: v }, { app: 'a', env: v }))
    .map((source) => ({ ...valid, source })),
  value_invalid: fc.oneof(
    fc.constantFrom('1', true, null, undefined, {}).map((value) => ({ ...metric, value })),
    fc.constant({ ...metric, summary: { count: 1, min: 1, max: 1, sum: 1, avg: 1 } }),
  ),
  value_out_of_range: fc.oneof(
    fc.constantFrom(1e301, -1e301, Number.MAX_VALUE).map((value) => ({ ...metric, value })),
    fc.constant({ ...metric, value: undefined, summary: { count: 1, min: -1e301, max: 0, sum: 0, avg: 0 } }),
  ),
  summary_invalid: fc
    .constantFrom(
      'x',
      3,
      { count: 1 },
      { count: 0, min: 1, max: 1, sum: 1, avg: 1 },
      { count: 2, min: 3, max: 1, sum: 4, avg: 2 },
      { count: 2, min: 1, max: 3, sum: 4, avg: 3 },
      { count: 1.5, min: 1, max: 1, sum: 1, avg: 1 },
    )
    .map((summary) => ({ ...metric, value: undefined, summary })),
  error_invalid: fc
    .oneof(
      fc.constantFrom(undefined, null, 'boom', 7, {}, { message: 3 }, { message: 'm', stack: 3 }),
      longText(1025).map((message) => ({ message })),
      longText(129).map((kind) => ({ message: 'm', kind })),
      unstorable.map((message) => ({ message })),
    )
    .map((error) => ({ ...errorEvent, error })),
  message_invalid: fc
    .oneof(fc.constantFrom(12, true, {}), longText(1025), unstorable)
    .map((message) => ({ ...valid, message })),
  attributes_invalid: fc.constantFrom('x', [1], 2, true).map((attributes) => ({ ...valid, attributes })),
  attributes_too_many: fc.integer({ min: 33, max: 40 }).map((n) => ({
    ...valid,
    attributes: Object.fromEntries(Array.from({ length: n }, (_, k) => [`k${k}`, k])),
  })),
  attribute_key_invalid: fc
    .oneof(fc.constantFrom('', '__proto__', 'constructor', 'prototype'), longText(65), unstorable)
    // `Object.fromEntries` makes `__proto__` an own member, as JSON.parse does.
    .map((key) => ({ ...valid, attributes: Object.fromEntries([[key, 1]]) })),
  attribute_value_invalid: fc
    .oneof(fc.constantFrom(null, { b: 1 }, [1]), longText(1025), unstorable)
    .map((value) => ({ ...valid, attributes: { a: value } })),
};

/** An event validation refuses, of any reason it gives. */
export const rejectedEvent: fc.Arbitrary<unknown> = fc.oneof(...Object.values(BY_REASON));
