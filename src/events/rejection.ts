import { RESERVED_ATTRIBUTE_KEYS } from './attribute-key';
import type { EventLimits } from './limits';
import { textLimits as max } from './text-limits';
import { EVENT_TYPES } from './types';

/**
 * Why one event of a request was not taken, and what to do about it. Codes are stable: SDKs and
 * dashboards match on them. Each code's hint is a sentence for the person who wrote the event,
 * with the collector's own limits in it (the answer's `rejected[].hint`; docs/http-api.md lists
 * them at the default limits, and a unit test keeps both in step).
 *
 * "Text" below means a string that can be stored exactly as sent: well-formed
 * Unicode (no lone surrogate) without U+0000. Nothing is replaced on the way in;
 * a string that is not text is refused with the reason of its field.
 */
export const REJECTION_REASONS = {
  not_an_object: () => 'each element of "events" must be a JSON object',
  id_invalid: () =>
    'id must be a UUID string such as "0190f3c2-7f00-7000-8000-000000000001" (v7 preferred), or left out for the collector to assign one',
  type_invalid: () => `type must be one of ${typesText()}`,
  name_invalid: () =>
    'name must be a dotted identifier: letters, digits, "_" and "-" between dots, such as "render.frame_drop"',
  name_too_long: (l) => `name must be at most ${max(l).name} characters`,
  ts_invalid: () => 'ts must be an integer: milliseconds since the Unix epoch, such as Date.now()',
  ts_out_of_range: (l) =>
    `ts must be milliseconds since the epoch, ${tsWindowText(l)} (seconds are 1000 times too small)`,
  source_invalid: (l) =>
    `source must be an object whose "app" is a non-empty string of at most ${max(l).app} characters`,
  source_field_invalid: (l) =>
    `source.version and source.env, when present, must be strings of at most ${Math.min(max(l).version, max(l).env)} characters`,
  value_invalid: () => 'a metric needs "value", a finite number, or "summary" (not both)',
  value_out_of_range: () =>
    'metric values (value, summary min and max) must lie within ±1e300, and a summary sum within ±count × 1e300, so that rollup sums stay finite',
  summary_invalid: () =>
    'summary must be {count, min, max, sum, avg} of finite numbers, count an integer ≥ 1, min ≤ max and avg = sum / count',
  error_invalid: (l) =>
    `an error event needs "error": {"message": string of at most ${max(l).errorMessage} characters, "kind"?, "stack"?}`,
  message_invalid: (l) => `message must be a string of at most ${max(l).message} characters`,
  attributes_invalid: () =>
    'attributes must be a flat object whose values are strings, finite numbers or booleans',
  attributes_too_many: (l) => `an event may carry at most ${l.maxAttributes} attributes`,
  attribute_key_invalid: (l) =>
    `attribute keys must be 1 to ${max(l).attributeKey} characters and not ${alternatives(RESERVED_ATTRIBUTE_KEYS)}`,
  app_mismatch: () => 'source.app must be the app this API key was made for',
  too_many_apps: (l) =>
    `this collector takes events from at most ${l.maxAppsPerMinute ?? 'a bounded number of'} distinct apps a minute (SLUICE_MAX_APPS_PER_MINUTE) and had that many: an app it took keeps being taken, a new one is taken once fewer apps send`,
  attribute_value_invalid: (l) =>
    `attribute values must be strings of at most ${max(l).attributeValue} characters, finite numbers or booleans`,
} as const satisfies Record<string, (limits: EventLimits) => string>;

export type RejectionReason = keyof typeof REJECTION_REASONS;

/**
 * Reasons intake gives from who sent an event and how many apps send (the API key's app, the
 * bound on apps), never from the event itself: every other reason is validation's
 * (events/validate.ts), and the single pass is compared with it on each of them.
 */
export const INTAKE_REJECTION_REASONS = [
  'app_mismatch',
  'too_many_apps',
] as const satisfies readonly RejectionReason[];

export interface Rejection {
  readonly reason: RejectionReason;
  /** The offending field, e.g. `attributes.route`; an attribute key is cut to 64 characters. */
  readonly field?: string;
}

/** Every reason's hint under `limits`: made once per collector, not per rejection. */
export function rejectionHints(limits: EventLimits): Readonly<Record<RejectionReason, string>> {
  const hints = {} as Record<RejectionReason, string>;
  for (const reason of Object.keys(REJECTION_REASONS) as RejectionReason[]) {
    hints[reason] = REJECTION_REASONS[reason](limits);
  }
  return Object.freeze(hints);
}

/** `"error", "lifecycle", "log", "metric"`: the event types, the highest priority first. */
function typesText(): string {
  return [...EVENT_TYPES]
    .reverse()
    .map((t) => `"${t}"`)
    .join(', ');
}

/** `a, b or c` */
function alternatives(words: readonly string[]): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1) as string}`;
}

/** `within 7 days back and 5 minutes ahead of the collector's clock`: the ts window, for hints. */
export function tsWindowText(l: EventLimits): string {
  return `within ${durationText(l.maxAgeMs)} back and ${durationText(l.maxFutureMs)} ahead of the collector's clock`;
}

const UNITS: ReadonlyArray<readonly [string, number]> = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
];

/** `7 days`, `5 minutes`, `90 seconds`: the largest unit that divides `ms` exactly. */
function durationText(ms: number): string {
  for (const [unit, size] of UNITS) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}${ms === size ? '' : 's'}`;
  }
  return `${ms} ms`;
}
