import type { EventLimits } from './limits';

/**
 * The limit that bounds each text field of the contract (UTF-16 code units): one table the typed
 * path (events/validate.ts), the single pass (events/scan/scan-event.ts) and the rejection hints
 * read, so a field's bound is written once.
 */
export const TEXT_LIMIT = {
  name: 'maxNameLength',
  app: 'maxSourceLength',
  version: 'maxSourceLength',
  env: 'maxSourceLength',
  message: 'maxStringLength',
  errorMessage: 'maxStringLength',
  errorKind: 'maxSourceLength',
  /** A longer stack is cut to it, not refused. */
  errorStack: 'maxStackLength',
  attributeKey: 'maxAttributeKeyLength',
  attributeValue: 'maxStringLength',
} as const satisfies Record<string, keyof EventLimits>;

export type LimitedText = keyof typeof TEXT_LIMIT;

/** Each text field's bound under `limits` (code units). */
export type TextLimits = { readonly [F in LimitedText]: number };

const resolved = new WeakMap<EventLimits, TextLimits>();

/** Each text field's bound under `limits`; resolved once per limits object. */
export function textLimits(limits: EventLimits): TextLimits {
  let out = resolved.get(limits);
  if (out === undefined) {
    const bounds = {} as Record<LimitedText, number>;
    for (const field of Object.keys(TEXT_LIMIT) as LimitedText[]) bounds[field] = limits[TEXT_LIMIT[field]];
    out = Object.freeze(bounds);
    resolved.set(limits, out);
  }
  return out;
}
