/**
 * Bounds the SDK applies at capture, equal to the collector's defaults (the
 * collector's test/unit/sdk/wire-contract.test.ts keeps them so): an event the
 * collector would reject is cut or dropped at the source instead of crossing
 * the network.
 */
export const CAPTURE_LIMITS = {
  /** Most attributes kept on one event; the rest are dropped. */
  maxAttributes: 32,
  /** Longest attribute key kept (characters). */
  maxAttributeKeyLength: 64,
  /** Attribute strings, log and error messages are cut to this length (characters). */
  maxStringLength: 1024,
  /** Error stacks are cut to this length (characters). */
  maxStackLength: 16384,
  /** Longest event name (characters); a longer name drops the event. */
  maxNameLength: 128,
  /** `error.kind` is cut to this length (characters). */
  maxKindLength: 128,
  /** Largest metric value magnitude; a larger one drops the sample (it would overflow rollup sums). */
  maxMetricMagnitude: 1e300,
} as const;

/** The collector's rule for `name`: dotted identifier of letters, digits, `_` and `-`. */
export const DOTTED_NAME = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

const validNames = new Set<string>();
/** Names are few and repeat on every capture: remember the valid ones (bounded). */
const MAX_REMEMBERED_NAMES = 2000;

/** Whether `name` would be accepted by the collector (after `suffix` is appended). */
export function isValidName(name: unknown, suffix = ''): name is string {
  if (typeof name !== 'string' || name.length + suffix.length > CAPTURE_LIMITS.maxNameLength) return false;
  if (validNames.has(name)) return true;
  if (!DOTTED_NAME.test(name)) return false;
  if (validNames.size < MAX_REMEMBERED_NAMES) validNames.add(name);
  return true;
}

/** Why `isValidName(name, suffix)` is false: the collector's reason code for it. */
export function nameRefusal(name: unknown): 'name_invalid' | 'name_too_long' {
  return typeof name === 'string' && DOTTED_NAME.test(name) ? 'name_too_long' : 'name_invalid';
}

export function truncate(s: string, max: number): string {
  if (s.length <= max) return s;
  // Never end on the first half of a surrogate pair: the collector refuses lone surrogates.
  const last = s.charCodeAt(max - 1);
  return s.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
