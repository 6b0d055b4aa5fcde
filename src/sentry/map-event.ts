import { storableText } from '../events/cut-text';
import type { EventLimits } from '../events/limits';
import { isTsInWindow } from '../events/ts-window';
import type { TelemetryEvent } from '../events/types';
import { AttributeBag } from '../otlp/attributes';
import { deterministicId } from '../otlp/event-id';
import { exceptionDetail } from '../otlp/exception-detail';
import { sluiceName } from '../otlp/names';
import { record } from '../otlp/scalars';
import { exceptionsOf, stackText } from './exception-stack';
import type { SentryEvent } from './model';

/** What a mapper needs besides the payload. */
export interface SentryMappingContext {
  readonly limits: EventLimits;
  /** The app the DSN names (routes: the key's app, or the project's). */
  readonly app: string;
  /** Now (epoch milliseconds): the ts of an event without one, and the middle of the ts window. */
  readonly now: number;
}

/** One payload's mapping: an event, or the reason it could not be one (counted as rejected). */
export type MappedSentryEvent =
  | { readonly event: TelemetryEvent; readonly droppedAttributes: number }
  | { readonly unmapped: 'not_an_event' | 'ts_out_of_range' };

/** The name of an event with no `logger` and no `transaction`. */
export const DEFAULT_NAME = 'sentry.event';
/** Levels that make an `error` event (absent is `error`); the others make a `log` event. */
const ERROR_LEVELS: ReadonlySet<string> = new Set(['error', 'fatal']);
/**
 * The fields of a context kept as attributes (`os.name`, `runtime.version`, `browser.name`, …);
 * the others (memory sizes, boot times, CPU models) describe the process and would use up the
 * event's attribute budget on every event.
 */
const CONTEXT_FIELDS = ['name', 'version'] as const;
const HEX32 = /^[0-9a-fA-F]{32}$/;

/**
 * A Sentry event payload (an envelope's `event` item, or a `/store/` body) → one Sluice event,
 * built typed within the intake's limits (docs/sentry.md, "Mapping"):
 * - `level` error or fatal (or absent) → `error`, with kind, message and stack from the last of
 *   `exception.values` (else the message); lower levels → `log`;
 * - name: `logger`, else `transaction`, else `sentry.event`, by the rule of otlp/names.ts;
 * - `event_id` → id (the same UUID, so a resent event is stored once), `timestamp` → ts,
 *   `release` → version, `environment` → env;
 * - attributes, within the limit, in this order: `sentry.level`, `sentry.platform`,
 *   `server_name`, `transaction`, `trace_id` (contexts.trace), then `tags`, then each context's
 *   `name` and `version` as `<context>.name`, `<context>.version` (`os.name`, `runtime.version`).
 */
export function mapSentryEvent(payload: unknown, ctx: SentryMappingContext): MappedSentryEvent {
  const e = record<SentryEvent>(payload);
  if (e === null) return { unmapped: 'not_an_event' };
  const { limits } = ctx;
  const level = typeof e.level === 'string' && e.level !== '' ? e.level.toLowerCase() : 'error';
  const chain = exceptionsOf(e.exception);
  const primary = chain[chain.length - 1];
  const message = messageOf(e);
  const isError = ERROR_LEVELS.has(level);
  const ts = tsOf(e.timestamp) ?? ctx.now;
  if (!isTsInWindow(ts, ctx.now, limits)) return { unmapped: 'ts_out_of_range' };

  const bag = new AttributeBag({
    maxAttributes: limits.maxAttributes,
    maxKeyLength: limits.maxAttributeKeyLength,
    maxStringLength: limits.maxStringLength,
  });
  bag.set('sentry.level', level);
  setText(bag, 'sentry.platform', e.platform);
  setText(bag, 'server_name', e.server_name);
  setText(bag, 'transaction', e.transaction);
  const contexts = record<Record<string, unknown>>(e.contexts);
  setText(bag, 'trace_id', record<{ trace_id?: unknown }>(contexts?.trace)?.trace_id);
  for (const [key, value] of tagsOf(e.tags)) setScalar(bag, key, value);
  for (const [name, fields] of Object.entries(contexts ?? {})) {
    const ctxFields = record<Record<string, unknown>>(fields);
    for (const field of CONTEXT_FIELDS) setScalar(bag, `${name}.${field}`, ctxFields?.[field]);
  }

  const nameSource = text(e.logger) || text(e.transaction);
  const name = nameSource ? sluiceName(nameSource, limits.maxNameLength, DEFAULT_NAME) : DEFAULT_NAME;
  const bounded = (s: string): string => storableText(s, limits.maxStringLength);
  const source = (v: unknown): string | null =>
    text(v) ? storableText(text(v), limits.maxSourceLength) : null;
  const exceptionMessage = primary === undefined ? '' : text(primary.value);
  const kind = primary === undefined ? '' : text(primary.type);
  const event: TelemetryEvent = {
    id: eventIdOf(e.event_id, payload),
    type: isError ? 'error' : 'log',
    name,
    ts,
    app: ctx.app,
    version: source(e.release),
    env: source(e.environment),
    value: null,
    summary: null,
    error: isError
      ? exceptionDetail(
          exceptionMessage || message || kind || name,
          kind,
          chain.length > 0 ? stackText(chain) : '',
          limits,
        )
      : null,
    // An error keeps its message when it says something besides the exception's; a log keeps it
    // whole, or the exception's head line when it has no message.
    message: isError
      ? message && message !== exceptionMessage
        ? bounded(message)
        : null
      : bounded(message || (chain.length > 0 ? (stackText(chain).split('\n')[0] ?? '') : '')) || null,
    attributes: bag.toObject(),
  };
  return { event, droppedAttributes: bag.dropped };
}

/** `logentry.formatted`, `logentry.message`, or `message` (a text or an object of those). */
function messageOf(e: SentryEvent): string {
  for (const m of [e.logentry, e.message]) {
    if (typeof m === 'string' && m !== '') return m;
    const o = record<{ formatted?: unknown; message?: unknown }>(m);
    const t = text(o?.formatted) || text(o?.message);
    if (t) return t;
  }
  return '';
}

/**
 * The event's id: its `event_id` (32 hex digits) as a UUID, so a resent event is stored once;
 * without a valid one, an id digested from the payload (a resend of the same payload is still one).
 */
export function eventIdOf(eventId: unknown, payload: unknown): string {
  if (typeof eventId === 'string' && HEX32.test(eventId.replaceAll('-', ''))) {
    const h = eventId.replaceAll('-', '').toLowerCase();
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
  }
  return deterministicId('sentry', JSON.stringify(payload));
}

/** `timestamp` in epoch milliseconds (seconds as a number, or an RFC 3339 text); null when absent or unreadable. */
export function tsOf(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.round(v * 1000);
  if (typeof v === 'string' && v !== '') {
    // Python's SDK writes naive UTC times (no zone): they are UTC.
    const withZone = /[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : `${v}Z`;
    const ms = Date.parse(withZone);
    return Number.isFinite(ms) ? ms : null;
  }
  return null;
}

function tagsOf(tags: unknown): Array<[string, unknown]> {
  if (Array.isArray(tags)) {
    return tags.flatMap((pair: unknown) =>
      Array.isArray(pair) && typeof pair[0] === 'string' ? [[pair[0], pair[1]] as [string, unknown]] : [],
    );
  }
  const o = record<Record<string, unknown>>(tags);
  return o === null ? [] : Object.entries(o);
}

function setScalar(bag: AttributeBag, key: string, value: unknown): void {
  if (typeof value === 'string') {
    if (value !== '') bag.set(key, value);
  } else if (typeof value === 'boolean') {
    bag.set(key, value);
  } else if (typeof value === 'number' && Number.isFinite(value)) {
    bag.set(key, value);
  }
}

/** Sets `key` when `value` is a non-empty text. */
export function setText(bag: AttributeBag, key: string, value: unknown): void {
  if (typeof value === 'string' && value !== '') bag.set(key, value);
}

/** `v` when it is a text, else ''. */
export function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
