import { bytesAreDottedName } from '../dotted-name';
import { ATTRIBUTE_OVERHEAD_BYTES, EVENT_OVERHEAD_BYTES } from '../event-size';
import type { EventLimits } from '../limits';
import { isWithinMetricBound, summaryOutOfRange } from '../metric-bound';
import { summaryFault } from '../summary-rule';
import { textLimits, type TextLimits } from '../text-limits';
import { isTsInWindow } from '../ts-window';
import { EVENT_TYPES } from '../types';
import { bytesAreUuid } from '../uuid';
import {
  CLOSE_OBJECT,
  COLON,
  COMMA,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  Token,
  isLiteral,
  numberValue,
  readNumber,
  readString,
  skipSpace,
  skipValue,
} from './json-text';
import { sortAttributes } from './attribute-order';
import {
  ERROR_MEMBER,
  EVENT_MEMBER,
  isReservedKey,
  M_ATTRIBUTES,
  M_ERROR,
  M_ID,
  M_MESSAGE,
  M_NAME,
  M_SOURCE,
  M_SUMMARY,
  M_TS,
  M_TYPE,
  M_VALUE,
  SOURCE_MEMBER,
  SUMMARY_MEMBER,
  type NameList,
  typeOf,
} from './member-names';
import {
  ATTR_FALSE,
  ATTR_NUMBER,
  ATTR_NUMBER_TEXT,
  ATTR_STRING,
  ATTR_TRUE,
  ScannedEvent,
  TextField,
} from './scanned-event';

/*
 * One event object of a body, read and validated in one pass over its bytes (scan-request.ts).
 * It decides only "fast": the event is one validation takes as it is (events/validate.ts), and
 * every field is one this pass writes exactly as the typed path would. Anything else (an invalid
 * field, a duplicate member, an escaped key, a stack to cut, a number written as `1e3` where an
 * integer is due) leaves the event to the typed path, which gives the same answer it always did.
 */

/** How a member's value was found. */
const ABSENT = 0;
const NULL = 1;
const GOOD = 2;
const BAD = 3;

const DASH = 0x2d;

/** The objects of an event whose members `EventScanner.object` reads. */
const SOURCE_OBJECT = 0;
const SUMMARY_OBJECT = 1;
const ERROR_OBJECT = 2;

class EventScan {
  seen = 0;
  fast = true;
  type = -1;
  tsOk = false;
  sourceOk = false;
  valueState = ABSENT;
  summaryState = ABSENT;
  errorState = ABSENT;
  idOk = false;
  nameOk = false;

  reset(): void {
    this.seen = 0;
    this.fast = true;
    this.type = -1;
    this.tsOk = false;
    this.sourceOk = false;
    this.valueState = ABSENT;
    this.summaryState = ABSENT;
    this.errorState = ABSENT;
    this.idOk = false;
    this.nameOk = false;
  }
}

/** Reads keys and values of one event; one per scan. */
export class EventScanner {
  private readonly t = new Token();
  /** An attribute's value, read while `t` still holds its key. */
  private readonly t2 = new Token();
  private readonly s = new EventScan();
  /** The summary's numbers (count, min, max, sum, avg) as read, NaN when absent. */
  private readonly numbers = new Float64Array(5);
  /** Whether every number of the summary read so far is a JSON number. */
  private summaryOk = true;
  /** Each text field's bound (events/text-limits.ts). */
  private readonly max: TextLimits;
  /** The last event scanned is in `fields`, for the fast path. */
  fast = false;

  constructor(
    private readonly limits: EventLimits,
    /** The clock's now for the ts window (milliseconds). */
    private readonly now: number,
    readonly fields: ScannedEvent,
    /**
     * Called before a nested array or object is skipped: the request's shape check
     * (`RequestScan.open`), which throws to refuse the body.
     */
    private readonly checkShape: () => void,
  ) {
    this.max = textLimits(limits);
  }

  /** Skips the value at `p`; a nested array or object only after the request's shape check. */
  private skip(text: Uint8Array, p: number, t: Token): number {
    const c = text[p];
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) this.checkShape();
    return skipValue(text, p, t);
  }

  /**
   * Scans the event object whose `{` is at `i`. Answers the index past its `}`, or -1 when the
   * body is not JSON there; `fast` then says whether `fields` hold the event for the fast path.
   */
  scan(text: Uint8Array, i: number): number {
    const s = this.s;
    const f = this.fields;
    s.reset();
    f.reset();
    let p = skipSpace(text, i + 1);
    if (text[p] === CLOSE_OBJECT) {
      this.fast = false;
      return p + 1;
    }
    for (;;) {
      if (text[p] !== QUOTE) return -1;
      p = readString(text, p, this.t);
      if (p < 0) return -1;
      const member = this.t.escaped ? -1 : EVENT_MEMBER.indexOf(text, this.t.start, this.t.end);
      p = skipSpace(text, p);
      if (text[p] !== COLON) return -1;
      p = skipSpace(text, p + 1);
      if (member >= 0) {
        const bit = 1 << member;
        if ((s.seen & bit) !== 0) s.fast = false;
        s.seen |= bit;
      } else if (member === -1) s.fast = false;
      p = this.member(text, p, member);
      if (p < 0) return -1;
      p = skipSpace(text, p);
      if (text[p] === CLOSE_OBJECT) break;
      if (text[p] !== COMMA) return -1;
      p = skipSpace(text, p + 1);
    }
    f.spanStart = i;
    f.spanEnd = p + 1;
    this.fast = s.fast && this.complete();
    return p + 1;
  }

  /** The rules validation applies once the members are known (events/validate.ts). */
  private complete(): boolean {
    const s = this.s;
    const f = this.fields;
    if (!s.idOk || s.type < 0 || !s.nameOk || !s.tsOk || !s.sourceOk) return false;
    f.type = EVENT_TYPES[s.type] as ScannedEvent['type'];
    if (f.type === 'metric') {
      if (s.summaryState !== ABSENT && s.summaryState !== NULL) {
        if (s.valueState !== ABSENT && s.valueState !== NULL) return false;
        if (s.summaryState !== GOOD) return false;
        f.summary = true;
      } else if (s.valueState !== GOOD || !isWithinMetricBound(f.value)) return false;
    }
    if (f.type === 'error') {
      if (s.errorState !== GOOD) return false;
    } else {
      f.errorMessage.clear();
      f.errorKind.clear();
      f.errorStack.clear();
    }
    let units = f.name.units + f.app.units + f.version.units + f.env.units + f.message.units;
    if (f.type === 'error') units += f.errorMessage.units + f.errorKind.units + f.errorStack.units;
    let bytes = EVENT_OVERHEAD_BYTES + units * 2;
    for (let a = 0; a < f.attributeCount; a++) {
      bytes += (f.keyUnits[a] as number) * 2 + ATTRIBUTE_OVERHEAD_BYTES;
      if (f.valueKind[a] === ATTR_STRING) bytes += (f.valueNumber[a] as number) * 2;
    }
    f.bytes = bytes;
    return true;
  }

  private member(text: Uint8Array, p: number, member: number): number {
    const s = this.s;
    const f = this.fields;
    const t = this.t;
    const { max } = this;
    const c = text[p];
    switch (member) {
      case M_ID: {
        if (c !== QUOTE) break;
        const end = readString(text, p, t);
        s.idOk = end > 0 && !t.escaped && bytesAreUuid(text, t.start, t.end);
        f.idStart = t.start;
        return end;
      }
      case M_TYPE: {
        if (c !== QUOTE) break;
        const end = readString(text, p, t);
        s.type = t.escaped ? -1 : typeOf(text, t.start, t.end);
        return end;
      }
      case M_NAME: {
        if (c !== QUOTE) break;
        const end = readString(text, p, t);
        s.nameOk = end > 0 && !t.escaped && t.units <= max.name && bytesAreDottedName(text, t.start, t.end);
        setText(f.name, t);
        return end;
      }
      case M_TS: {
        if (c !== DASH && !(c !== undefined && c >= 0x30 && c <= 0x39)) break;
        const end = readNumber(text, p, t);
        if (end < 0) return -1;
        const ts = numberValue(text, t);
        s.tsOk = t.plainInteger && Number.isSafeInteger(ts) && isTsInWindow(ts, this.now, this.limits);
        f.ts = ts;
        f.tsStart = t.start;
        f.tsEnd = t.end;
        return end;
      }
      case M_SOURCE:
        if (c !== OPEN_OBJECT) break;
        return this.source(text, p);
      case M_VALUE: {
        if (c === 0x6e && isLiteral(text, p, 'null')) {
          s.valueState = NULL;
          return p + 4;
        }
        if (c !== DASH && !(c !== undefined && c >= 0x30 && c <= 0x39)) {
          s.valueState = BAD;
          return this.skip(text, p, t);
        }
        const end = readNumber(text, p, t);
        if (end < 0) return -1;
        f.value = numberValue(text, t);
        f.valueTextStart = t.start;
        f.valueTextEnd = t.end;
        f.valueCanonical = t.canonical;
        s.valueState = Number.isFinite(f.value) ? GOOD : BAD;
        return end;
      }
      case M_SUMMARY:
        if (c === 0x6e && isLiteral(text, p, 'null')) {
          s.summaryState = NULL;
          return p + 4;
        }
        if (c !== OPEN_OBJECT) {
          s.summaryState = BAD;
          return this.skip(text, p, t);
        }
        return this.summary(text, p);
      case M_ERROR:
        if (c === 0x6e && isLiteral(text, p, 'null')) {
          s.errorState = NULL;
          return p + 4;
        }
        if (c !== OPEN_OBJECT) {
          s.errorState = BAD;
          return this.skip(text, p, t);
        }
        return this.error(text, p);
      case M_MESSAGE:
        return this.optionalText(text, p, f.message, max.message);
      case M_ATTRIBUTES:
        if (c === 0x6e && isLiteral(text, p, 'null')) return p + 4;
        if (c !== OPEN_OBJECT) break;
        return this.attributes(text, p);
      default:
        return this.skip(text, p, t);
    }
    s.fast = false;
    return this.skip(text, p, t);
  }

  /** An optional text field: a string within `max` units that storage keeps as it is, or null. */
  private optionalText(text: Uint8Array, p: number, field: TextField, max: number): number {
    const t = this.t;
    const c = text[p];
    if (c === 0x6e && isLiteral(text, p, 'null')) {
      field.clear();
      return p + 4;
    }
    if (c !== QUOTE) {
      this.s.fast = false;
      return this.skip(text, p, t);
    }
    const end = readString(text, p, t);
    if (end < 0) return -1;
    if (t.units > max || t.unstorable) this.s.fast = false;
    setText(field, t);
    return end;
  }

  /**
   * Members of an object of `kind`, each handed to `objectMember` with its key's member code (an
   * escaped key's value is skipped). No closure per object: this runs for every event's source.
   */
  private object(text: Uint8Array, p: number, keys: NameList, kind: number): number {
    const t = this.t;
    let q = skipSpace(text, p + 1);
    if (text[q] === CLOSE_OBJECT) return q + 1;
    let seen = 0;
    for (;;) {
      if (text[q] !== QUOTE) return -1;
      q = readString(text, q, t);
      if (q < 0) return -1;
      const member = t.escaped ? -1 : keys.indexOf(text, t.start, t.end);
      if (member === -1) this.s.fast = false;
      if (member >= 0) {
        if ((seen & (1 << member)) !== 0) this.s.fast = false;
        seen |= 1 << member;
      }
      q = skipSpace(text, q);
      if (text[q] !== COLON) return -1;
      q = skipSpace(text, q + 1);
      q = member >= 0 ? this.objectMember(kind, text, member, q) : this.skip(text, q, t);
      if (q < 0) return -1;
      q = skipSpace(text, q);
      if (text[q] === CLOSE_OBJECT) return q + 1;
      if (text[q] !== COMMA) return -1;
      q = skipSpace(text, q + 1);
    }
  }

  /** The value of member `member` of an object of `kind`, at `at`. */
  private objectMember(kind: number, text: Uint8Array, member: number, at: number): number {
    const f = this.fields;
    const { max } = this;
    if (kind === SOURCE_OBJECT) {
      if (member === 0) return this.optionalText(text, at, f.app, max.app);
      if (member === 1) return this.optionalText(text, at, f.version, max.version);
      if (member === 2) return this.optionalText(text, at, f.env, max.env);
    } else if (kind === ERROR_OBJECT) {
      if (member === 0) return this.optionalText(text, at, f.errorMessage, max.errorMessage);
      if (member === 1) return this.optionalText(text, at, f.errorKind, max.errorKind);
      if (member === 2) return this.optionalText(text, at, f.errorStack, max.errorStack);
    } else if (member < this.numbers.length) return this.summaryNumber(text, member, at);
    return this.skip(text, at, this.t);
  }

  private source(text: Uint8Array, p: number): number {
    const f = this.fields;
    const end = this.object(text, p, SOURCE_MEMBER, SOURCE_OBJECT);
    this.s.sourceOk = f.app.present && f.app.units > 0;
    return end;
  }

  /** A number of the summary, member `member` (count, min, max, sum, avg) at `at`. */
  private summaryNumber(text: Uint8Array, member: number, at: number): number {
    const t = this.t;
    const c = text[at];
    if (c !== DASH && !(c !== undefined && c >= 0x30 && c <= 0x39)) {
      this.summaryOk = false;
      return this.skip(text, at, t);
    }
    const q = readNumber(text, at, t);
    this.numbers[member] = numberValue(text, t);
    return q;
  }

  private summary(text: Uint8Array, p: number): number {
    const numbers = this.numbers;
    numbers.fill(NaN);
    this.summaryOk = true;
    const end = this.object(text, p, SUMMARY_MEMBER, SUMMARY_OBJECT);
    const s = {
      count: numbers[0] as number,
      min: numbers[1] as number,
      max: numbers[2] as number,
      sum: numbers[3] as number,
      avg: numbers[4] as number,
    };
    const ok = this.summaryOk && summaryFault(s) === null && summaryOutOfRange(s) === null;
    this.s.summaryState = ok ? GOOD : BAD;
    const f = this.fields;
    f.count = s.count;
    f.min = s.min;
    f.max = s.max;
    f.sum = s.sum;
    return end;
  }

  private error(text: Uint8Array, p: number): number {
    const f = this.fields;
    // An error's fields decide only an error event: of another type they are not read, so a bad
    // one there must not send the event to the typed path. Their verdict is kept apart.
    const fast = this.s.fast;
    this.s.fast = true;
    const end = this.object(text, p, ERROR_MEMBER, ERROR_OBJECT);
    this.s.errorState = this.s.fast && f.errorMessage.present ? GOOD : BAD;
    this.s.fast = fast;
    return end;
  }

  private attributes(text: Uint8Array, p: number): number {
    const f = this.fields;
    const t = this.t;
    const { limits, max } = this;
    const t2 = this.t2;
    let q = skipSpace(text, p + 1);
    if (text[q] === CLOSE_OBJECT) return q + 1;
    for (;;) {
      if (text[q] !== QUOTE) return -1;
      q = readString(text, q, t);
      if (q < 0) return -1;
      const n = f.attributeCount;
      let ok =
        !t.escaped &&
        t.units > 0 &&
        t.units <= max.attributeKey &&
        t.highByte < 0xee &&
        !isReservedKey(text, t.start, t.end) &&
        n < limits.maxAttributes;
      const keyStart = t.start;
      const keyEnd = t.end;
      const units = t.units;
      q = skipSpace(text, q);
      if (text[q] !== COLON) return -1;
      q = skipSpace(text, q + 1);
      const c = text[q];
      let kind = ATTR_STRING;
      let number = 0;
      let valueStart = q;
      let valueEnd = q;
      if (c === QUOTE) {
        q = readString(text, q, t2);
        if (q < 0) return -1;
        ok = ok && !t2.escaped && t2.units <= max.attributeValue;
        valueStart = t2.start;
        valueEnd = t2.end;
        number = t2.units;
      } else if (c === 0x74 && isLiteral(text, q, 'true')) {
        kind = ATTR_TRUE;
        q += 4;
      } else if (c === 0x66 && isLiteral(text, q, 'false')) {
        kind = ATTR_FALSE;
        q += 5;
      } else if (c === DASH || (c !== undefined && c >= 0x30 && c <= 0x39)) {
        q = readNumber(text, q, t2);
        if (q < 0) return -1;
        kind = t2.canonical ? ATTR_NUMBER_TEXT : ATTR_NUMBER;
        number = numberValue(text, t2);
        ok = ok && Number.isFinite(number);
        valueStart = t2.start;
        valueEnd = t2.end;
      } else {
        ok = false;
        q = this.skip(text, q, t2);
        if (q < 0) return -1;
      }
      if (ok) {
        f.keyStart[n] = keyStart;
        f.keyEnd[n] = keyEnd;
        f.keyUnits[n] = units;
        f.valueStart[n] = valueStart;
        f.valueEnd[n] = valueEnd;
        f.valueKind[n] = kind;
        // A string's length in units, or a number's value.
        f.valueNumber[n] = number;
        f.attributeCount = n + 1;
      } else this.s.fast = false;
      q = skipSpace(text, q);
      if (text[q] === CLOSE_OBJECT) break;
      if (text[q] !== COMMA) return -1;
      q = skipSpace(text, q + 1);
    }
    if (!sortAttributes(text, f)) this.s.fast = false;
    return q + 1;
  }
}

function setText(field: TextField, t: Token): void {
  field.start = t.start;
  field.end = t.end;
  field.escaped = t.escaped;
  field.units = t.units;
}
