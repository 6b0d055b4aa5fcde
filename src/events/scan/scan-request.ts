import type { EventLimits } from '../limits';
import { latin1Text, sameBytes, utf8Text } from './byte-range';
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  Token,
  readString,
  skipSpace,
  skipValue,
} from './json-text';
import { EventScanner } from './scan-event';
import { borrowScannedEvent, releaseScannedEvent, type ScannedEvent, type TextField } from './scanned-event';

/** What the single pass did with one event of the body. */
export interface ScanHandlers {
  /** The event is valid and in `fields` (read them now: they hold the next event afterwards). */
  fast(fields: ScannedEvent, index: number, scan: RequestScan): void;
  /** The event is left to the typed path: `raw` is its value as `JSON.parse` gives it. */
  slow(raw: unknown, index: number): void;
}

/**
 * `scan` ran out of events; `fallback`: the body is not the shape the single pass reads (not
 * JSON, other members than `events`, more events than a request may hold): the typed path parses
 * it whole and gives the answer it always gave.
 */
export type ScanStep = 'more' | 'done' | 'fallback';

const EVENTS_KEY = 'events';
const REPORT_KEY = 'report';
/** Most distinct apps remembered per request: their names are made into strings once. */
const APP_CACHE = 8;

/**
 * The most a body holds that the pass reads through without asking for the shape check
 * (`RequestScan.open`): levels of nesting (the body, `events`, an event, its objects), objects per
 * event (itself, source, attributes, summary, error) and the envelope's objects.
 */
export const SCANNED_BODY_SHAPE = { depth: 4, containersPerEvent: 5, envelopeContainers: 2 } as const;

/**
 * The single pass over a `POST /v1/events` body (docs/ARCHITECTURE.md, "The path of an event"):
 * reads the envelope `{"events": [...]}` and each event straight from the bytes, and hands each
 * either as validated fields (`fast`) or, when it is anything the pass does not take as it is, as
 * its parsed value (`slow`) for the typed path. Resumable: `step` scans a few events at a time,
 * so that the loop can poll its sockets between slices of a large body.
 */
export class RequestScan {
  private readonly t = new Token();
  private readonly events: EventScanner;
  private pos: number;
  private index = 0;
  private finished = false;
  private report: { start: number; end: number } | null = null;
  /** How the scan ended (`done` or `fallback`), once it has: its fields are then given back. */
  private ended: ScanStep | null = null;
  private readonly maxAttributes: number;
  private readonly apps: Array<{ start: number; end: number; text: string }> = [];

  private constructor(
    readonly text: Buffer,
    arrayStart: number,
    limits: EventLimits,
    now: number,
    private readonly maxEvents: number,
    private readonly checkShape: () => void,
  ) {
    this.pos = arrayStart;
    this.maxAttributes = limits.maxAttributes;
    this.events = new EventScanner(limits, now, borrowScannedEvent(limits.maxAttributes), checkShape);
  }

  /**
   * A scan of `text`, or null when it does not begin as `{"events": [`. `checkShape` is the body's
   * whole shape check (nesting and number of values, http/json-scan.ts), which throws to refuse it:
   * the scan calls it before it skips a nested array or object and before it hands anything to
   * `JSON.parse`. A body read through without either holds only the contract's objects
   * (`SCANNED_BODY_SHAPE`), so the check is left to the caller for what the scan cannot bound: the
   * number of separators, by the body's length.
   */
  static open(
    text: Buffer,
    limits: EventLimits,
    now: number,
    maxEvents: number,
    checkShape: () => void,
  ): RequestScan | null {
    const t = new Token();
    let p = skipSpace(text, 0);
    if (text[p] !== OPEN_OBJECT) return null;
    p = skipSpace(text, p + 1);
    if (text[p] !== QUOTE) return null;
    p = readString(text, p, t);
    if (p < 0 || t.escaped || text.toString('latin1', t.start, t.end) !== EVENTS_KEY) return null;
    p = skipSpace(text, p);
    if (text[p] !== COLON) return null;
    p = skipSpace(text, p + 1);
    if (text[p] !== OPEN_ARRAY) return null;
    return new RequestScan(text, p + 1, limits, now, maxEvents, checkShape);
  }

  /** Events handed so far. */
  get count(): number {
    return this.index;
  }

  /**
   * Scans up to `max` more events. Once it answers `done` or `fallback` the scan is over: its
   * fields are given back for another request's scan.
   */
  step(max: number, on: ScanHandlers): ScanStep {
    if (this.ended !== null) return this.ended;
    const step = this.scanEvents(max, on);
    if (step !== 'more') {
      this.ended = step;
      releaseScannedEvent(this.maxAttributes, this.events.fields);
    }
    return step;
  }

  private scanEvents(max: number, on: ScanHandlers): ScanStep {
    if (this.finished) return 'done';
    const { text } = this;
    let p = skipSpace(text, this.pos);
    if (this.index === 0 && text[p] === CLOSE_ARRAY) return this.close(p + 1);
    for (let n = 0; n < max; n++) {
      if (this.index >= this.maxEvents) return 'fallback';
      const start = p;
      if (text[p] === OPEN_OBJECT) {
        p = this.events.scan(text, p);
        if (p < 0) return 'fallback';
        if (this.events.fast) on.fast(this.events.fields, this.index, this);
        else {
          this.checkShape();
          on.slow(JSON.parse(text.toString('utf8', start, p)), this.index);
        }
      } else {
        this.checkShape();
        p = skipValue(text, p, this.t);
        if (p < 0) return 'fallback';
        on.slow(JSON.parse(text.toString('utf8', start, p)), this.index);
      }
      this.index++;
      p = skipSpace(text, p);
      if (text[p] === CLOSE_ARRAY) return this.close(p + 1);
      if (text[p] !== COMMA) return 'fallback';
      p = skipSpace(text, p + 1);
    }
    this.pos = p;
    return 'more';
  }

  /** The text of the body's `report` member (a client report, after the events), or null. */
  reportText(): string | null {
    return this.report === null ? null : this.text.toString('utf8', this.report.start, this.report.end);
  }

  /**
   * The rest of the body after the events array: an optional `"report"` member (the SDK's client
   * report, docs/http-api.md), then `}` and nothing but whitespace.
   */
  private close(p: number): ScanStep {
    const { text } = this;
    let q = skipSpace(text, p);
    if (text[q] === COMMA) {
      q = skipSpace(text, q + 1);
      if (text[q] !== QUOTE) return 'fallback';
      q = readString(text, q, this.t);
      if (q < 0 || this.t.escaped || latin1Text(text, this.t.start, this.t.end) !== REPORT_KEY)
        return 'fallback';
      q = skipSpace(text, q);
      if (text[q] !== COLON) return 'fallback';
      const start = skipSpace(text, q + 1);
      // The report is parsed when the events are admitted.
      this.checkShape();
      q = skipValue(text, start, this.t);
      if (q < 0) return 'fallback';
      this.report = { start, end: q };
      q = skipSpace(text, q);
    }
    if (text[q] !== CLOSE_OBJECT) return 'fallback';
    q = skipSpace(text, q + 1);
    if (q !== text.length) return 'fallback';
    this.finished = true;
    return 'done';
  }

  /** The text of a field of the current event, as a string (an app's name is made once per request). */
  textOf(field: TextField, cache = false): string {
    const { text } = this;
    if (field.escaped) return JSON.parse(utf8Text(text, field.start - 1, field.end + 1)) as string;
    if (!cache) return utf8Text(text, field.start, field.end);
    const length = field.end - field.start;
    for (const app of this.apps) {
      if (app.end - app.start === length && sameBytes(text, field.start, field.end, app.start))
        return app.text;
    }
    const s = utf8Text(text, field.start, field.end);
    if (this.apps.length < APP_CACHE) this.apps.push({ start: field.start, end: field.end, text: s });
    return s;
  }

  /** The event's id, lower-case (validation normalises it so). */
  idOf(fields: ScannedEvent): string {
    const { text } = this;
    const id = latin1Text(text, fields.idStart, fields.idStart + 36);
    for (let k = fields.idStart; k < fields.idStart + 36; k++) {
      const c = text[k] as number;
      if (c >= 0x41 && c <= 0x46) return id.toLowerCase();
    }
    return id;
  }
}
