import type { EventType } from '../types';

/** Where a text field's JSON string lies in the body, and what it holds. */
export class TextField {
  /** First byte of the string's contents; -1: absent or null. */
  start = -1;
  /** At the closing quote. */
  end = 0;
  /** Holds escape sequences: its bytes must be decoded to be its text. */
  escaped = false;
  /** Length in UTF-16 code units. */
  units = 0;

  get present(): boolean {
    return this.start >= 0;
  }

  clear(): void {
    this.start = -1;
    this.end = 0;
    this.escaped = false;
    this.units = 0;
  }
}

/** The kinds of an attribute value. */
export const ATTR_STRING = 0;
export const ATTR_NUMBER = 1;
export const ATTR_TRUE = 2;
export const ATTR_FALSE = 3;
/** A number whose text in the body is as JavaScript writes it (copied as it is). */
export const ATTR_NUMBER_TEXT = 4;

/**
 * One valid event as the single pass found it in the body: positions of its text, its numbers
 * parsed, its attributes in code-unit order of their keys. One instance per scan, filled again for
 * every event and read by the storage's row encoder before the next (no object per event). Only
 * an event that validation takes exactly as the wire contract says is left here as `fast`; its
 * strings are text (storable), its numbers finite and within their bounds.
 */
export class ScannedEvent {
  type: EventType = 'metric';
  /** Where the event's object lies in the body (its `{` to past its `}`). */
  spanStart = 0;
  spanEnd = 0;
  /** First byte of the 36-byte UUID (its letters may be upper-case: writers lower them). */
  idStart = 0;
  ts = 0;
  /** The digits of `ts` (a plain integer): its text as written. */
  tsStart = 0;
  tsEnd = 0;
  readonly name = new TextField();
  readonly app = new TextField();
  readonly version = new TextField();
  readonly env = new TextField();
  readonly message = new TextField();
  /** A metric sample's value (when `summary` is false). */
  value = 0;
  /** Where the value's text is, and whether it is as JavaScript writes the value (copied as it is). */
  valueTextStart = 0;
  valueTextEnd = 0;
  valueCanonical = false;
  /** A metric carries a summary: `count`, `min`, `max`, `sum` below. */
  summary = false;
  count = 0;
  min = 0;
  max = 0;
  sum = 0;
  readonly errorMessage = new TextField();
  readonly errorKind = new TextField();
  readonly errorStack = new TextField();
  /** Attributes: how many, then per attribute (in body order) its key's and value's positions. */
  attributeCount = 0;
  keyStart: Int32Array;
  keyEnd: Int32Array;
  keyUnits: Int32Array;
  valueStart: Int32Array;
  valueEnd: Int32Array;
  valueKind: Uint8Array;
  valueNumber: Float64Array;
  /** Indices of the attributes in code-unit order of their keys. */
  order: Int32Array;
  /** The in-memory size estimate validation gives the event (events/event-size.ts). */
  bytes = 0;

  constructor(maxAttributes: number) {
    const n = Math.max(1, maxAttributes);
    this.keyStart = new Int32Array(n);
    this.keyEnd = new Int32Array(n);
    this.keyUnits = new Int32Array(n);
    this.valueStart = new Int32Array(n);
    this.valueEnd = new Int32Array(n);
    this.valueKind = new Uint8Array(n);
    this.valueNumber = new Float64Array(n);
    this.order = new Int32Array(n);
  }

  /** Forgets the previous event. */
  reset(): void {
    this.name.clear();
    this.app.clear();
    this.version.clear();
    this.env.clear();
    this.message.clear();
    this.errorMessage.clear();
    this.errorKind.clear();
    this.errorStack.clear();
    this.summary = false;
    this.value = 0;
    this.attributeCount = 0;
  }
}

/** Most idle `ScannedEvent`s kept per attribute capacity: one per request being scanned at once. */
const IDLE_KEPT = 16;
/** `ScannedEvent`s no scan holds, by attribute capacity (`maxAttributes`). */
const idle = new Map<number, ScannedEvent[]>();

/**
 * A `ScannedEvent` for a scan of events of at most `maxAttributes` attributes: an idle one when
 * there is one. Each holds eight typed arrays whose memory lies outside V8's heap (an allocation
 * and a free each, and work for the collector's sweeper), too dear to make for every request.
 * Hand it back with `releaseScannedEvent` once the scan is over.
 */
export function borrowScannedEvent(maxAttributes: number): ScannedEvent {
  return idle.get(maxAttributes)?.pop() ?? new ScannedEvent(maxAttributes);
}

/**
 * Gives back a `ScannedEvent` of `borrowScannedEvent(maxAttributes)` that nothing reads any more
 * (a scan that ends in an exception never gives its own back: it is collected).
 */
export function releaseScannedEvent(maxAttributes: number, e: ScannedEvent): void {
  let list = idle.get(maxAttributes);
  if (list === undefined) {
    list = [];
    idle.set(maxAttributes, list);
  }
  if (list.length < IDLE_KEPT) list.push(e);
}
