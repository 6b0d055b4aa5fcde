import { isStorableText } from './cut-text';

/** Keys that would reach an object's prototype chain if ever merged into a plain object. */
export const RESERVED_ATTRIBUTE_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

const RESERVED_KEYS: ReadonlySet<string> = new Set(RESERVED_ATTRIBUTE_KEYS);

/** Whether `key` may name an attribute: non-empty text within `maxLength` code units, not reserved. */
export function isAttributeKey(key: string, maxLength: number): boolean {
  return key.length > 0 && key.length <= maxLength && !RESERVED_KEYS.has(key) && isStorableText(key);
}
