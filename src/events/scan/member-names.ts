import { RESERVED_ATTRIBUTE_KEYS } from '../attribute-key';
import { EVENT_TYPES } from '../types';

/*
 * The names the single pass meets in an event's bytes (scan-event.ts): the contract's members, the
 * members of its objects, the types and the reserved attribute keys, each read from its one list.
 */

/** Members of an event, as bit positions of the scan's `seen`. */
export const M_ID = 0;
export const M_TYPE = 1;
export const M_NAME = 2;
export const M_TS = 3;
export const M_SOURCE = 4;
export const M_VALUE = 5;
export const M_SUMMARY = 6;
export const M_ERROR = 7;
export const M_MESSAGE = 8;
export const M_ATTRIBUTES = 9;
/** Not a member of the contract: ignored. */
const M_OTHER = 31;

function equals(text: Uint8Array, start: number, end: number, word: string): boolean {
  if (end - start !== word.length) return false;
  for (let k = 0; k < word.length; k++) if (text[start + k] !== word.charCodeAt(k)) return false;
  return true;
}

export function memberOf(text: Uint8Array, start: number, end: number): number {
  switch (end - start) {
    case 2:
      if (equals(text, start, end, 'id')) return M_ID;
      if (equals(text, start, end, 'ts')) return M_TS;
      break;
    case 4:
      if (equals(text, start, end, 'type')) return M_TYPE;
      if (equals(text, start, end, 'name')) return M_NAME;
      break;
    case 5:
      if (equals(text, start, end, 'value')) return M_VALUE;
      if (equals(text, start, end, 'error')) return M_ERROR;
      break;
    case 6:
      if (equals(text, start, end, 'source')) return M_SOURCE;
      break;
    case 7:
      if (equals(text, start, end, 'summary')) return M_SUMMARY;
      if (equals(text, start, end, 'message')) return M_MESSAGE;
      break;
    case 10:
      if (equals(text, start, end, 'attributes')) return M_ATTRIBUTES;
      break;
  }
  return M_OTHER;
}

export function sourceKeyOf(text: Uint8Array, start: number, end: number): number {
  if (equals(text, start, end, 'app')) return 0;
  if (equals(text, start, end, 'version')) return 1;
  if (equals(text, start, end, 'env')) return 2;
  return M_OTHER;
}

export function summaryKeyOf(text: Uint8Array, start: number, end: number): number {
  if (equals(text, start, end, 'count')) return 0;
  if (equals(text, start, end, 'min')) return 1;
  if (equals(text, start, end, 'max')) return 2;
  if (equals(text, start, end, 'sum')) return 3;
  if (equals(text, start, end, 'avg')) return 4;
  return M_OTHER;
}

export function errorKeyOf(text: Uint8Array, start: number, end: number): number {
  if (equals(text, start, end, 'message')) return 0;
  if (equals(text, start, end, 'kind')) return 1;
  if (equals(text, start, end, 'stack')) return 2;
  return M_OTHER;
}

/** The index of the type in `EVENT_TYPES`, or -1. */
export function typeOf(text: Uint8Array, start: number, end: number): number {
  for (let k = 0; k < EVENT_TYPES.length; k++)
    if (equals(text, start, end, EVENT_TYPES[k] as string)) return k;
  return -1;
}

export function isReservedKey(text: Uint8Array, start: number, end: number): boolean {
  for (const key of RESERVED_ATTRIBUTE_KEYS) if (equals(text, start, end, key)) return true;
  return false;
}
