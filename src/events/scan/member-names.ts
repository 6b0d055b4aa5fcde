import { RESERVED_ATTRIBUTE_KEYS } from '../attribute-key';
import { EVENT_TYPES } from '../types';
import { ERROR_MEMBERS, EVENT_MEMBERS, SOURCE_MEMBERS, SUMMARY_MEMBERS } from '../wire-members';

/*
 * The names the single pass meets in an event's bytes (scan-event.ts): the contract's members, the
 * members of its objects, the types and the reserved attribute keys, each found in its one list.
 */

/** Not a name of the list: a member the contract does not know (ignored). */
export const UNKNOWN_NAME = 31;

/** A list of ASCII names, looked up in bytes by length first. */
export class NameList {
  /** Indices in `names` of the names of each length. */
  private readonly byLength: number[][] = [];

  constructor(private readonly names: readonly string[]) {
    names.forEach((name, k) => (this.byLength[name.length] ??= []).push(k));
  }

  /** The index of the name that bytes `start` to `end` of `text` spell, or `UNKNOWN_NAME`. */
  indexOf(text: Uint8Array, start: number, end: number): number {
    const candidates = this.byLength[end - start];
    if (candidates === undefined) return UNKNOWN_NAME;
    for (let c = 0; c < candidates.length; c++) {
      const k = candidates[c] as number;
      if (spells(text, start, this.names[k] as string)) return k;
    }
    return UNKNOWN_NAME;
  }
}

/** Whether the bytes at `start` spell `word` (of ASCII; the length was matched). */
function spells(text: Uint8Array, start: number, word: string): boolean {
  for (let k = 0; k < word.length; k++) if (text[start + k] !== word.charCodeAt(k)) return false;
  return true;
}

export const EVENT_MEMBER = new NameList(EVENT_MEMBERS);
export const SOURCE_MEMBER = new NameList(SOURCE_MEMBERS);
export const SUMMARY_MEMBER = new NameList(SUMMARY_MEMBERS);
export const ERROR_MEMBER = new NameList(ERROR_MEMBERS);
const TYPE = new NameList(EVENT_TYPES);
const RESERVED_KEY = new NameList(RESERVED_ATTRIBUTE_KEYS);

/** Members of an event, as their indices in `EVENT_MEMBERS` (bit positions of the scan's `seen`). */
export const M_ID = EVENT_MEMBERS.indexOf('id');
export const M_TYPE = EVENT_MEMBERS.indexOf('type');
export const M_NAME = EVENT_MEMBERS.indexOf('name');
export const M_TS = EVENT_MEMBERS.indexOf('ts');
export const M_SOURCE = EVENT_MEMBERS.indexOf('source');
export const M_VALUE = EVENT_MEMBERS.indexOf('value');
export const M_SUMMARY = EVENT_MEMBERS.indexOf('summary');
export const M_ERROR = EVENT_MEMBERS.indexOf('error');
export const M_MESSAGE = EVENT_MEMBERS.indexOf('message');
export const M_ATTRIBUTES = EVENT_MEMBERS.indexOf('attributes');

/** The index of the type in `EVENT_TYPES`, or -1. */
export function typeOf(text: Uint8Array, start: number, end: number): number {
  const k = TYPE.indexOf(text, start, end);
  return k === UNKNOWN_NAME ? -1 : k;
}

export function isReservedKey(text: Uint8Array, start: number, end: number): boolean {
  return RESERVED_KEY.indexOf(text, start, end) !== UNKNOWN_NAME;
}
