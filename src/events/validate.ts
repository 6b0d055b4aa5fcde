import { isAppName } from './app-name';
import { assignedEventId } from './assigned-id';
import { isAttributeKey } from './attribute-key';
import { cutText, isStorableText, TRUNCATED } from './cut-text';
import { isDottedName } from './dotted-name';
import { ATTRIBUTE_OVERHEAD_BYTES, EVENT_OVERHEAD_BYTES } from './event-size';
import type { EventLimits } from './limits';
import { isWithinMetricBound, summaryOutOfRange } from './metric-bound';
import type { Rejection, RejectionReason } from './rejection';
import { sortKeys } from './sort-keys';
import { summaryFault } from './summary-rule';
import { textLimits, type TextLimits } from './text-limits';
import { isTsInWindow } from './ts-window';
import {
  EVENT_TYPES,
  type AttributeValue,
  type ErrorDetail,
  type EventType,
  type MetricSummary,
  type TelemetryEvent,
} from './types';
import { isUuid } from './uuid';

export type Validation =
  | { readonly ok: true; readonly event: TelemetryEvent; readonly bytes: number }
  | { readonly ok: false; readonly rejection: Rejection };

/** Longest attribute key echoed in a rejection's `field`: the key itself may be any length. */
const MAX_ECHOED_KEY = 64;

class Reject {
  constructor(readonly rejection: Rejection) {}
}

function fail(reason: RejectionReason, field?: string): never {
  throw new Reject(field === undefined ? { reason } : { reason, field });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optionalString(v: unknown, max: number, reason: RejectionReason, field: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || v.length > max || !isStorableText(v)) fail(reason, field);
  return v;
}

function parseSummary(v: unknown): MetricSummary {
  if (!isRecord(v)) fail('summary_invalid', 'summary');
  const { count, min, max, sum, avg } = v;
  if (![count, min, max, sum, avg].every((x) => typeof x === 'number')) fail('summary_invalid', 'summary');
  const s = { count, min, max, sum, avg } as MetricSummary;
  const fault = summaryFault(s);
  if (fault !== null) fail('summary_invalid', fault);
  const outOfRange = summaryOutOfRange(s);
  if (outOfRange !== null) fail('value_out_of_range', outOfRange);
  return s;
}

function parseError(v: unknown, max: TextLimits): ErrorDetail {
  if (
    !isRecord(v) ||
    typeof v.message !== 'string' ||
    v.message.length > max.errorMessage ||
    !isStorableText(v.message)
  ) {
    fail('error_invalid', 'error');
  }
  const kind = optionalString(v.kind, max.errorKind, 'error_invalid', 'error.kind');
  // A long stack is cut, not rejected: losing the error would cost more than its tail. The marker
  // says so, and the cut keeps surrogate pairs whole; only the part kept must be storable text.
  const stack =
    typeof v.stack === 'string'
      ? optionalString(
          cutText(v.stack, max.errorStack, TRUNCATED),
          max.errorStack,
          'error_invalid',
          'error.stack',
        )
      : optionalString(v.stack, max.errorStack, 'error_invalid', 'error.stack');
  return { message: v.message, kind, stack };
}

/** `attributes.<key>`, the key cut short: a rejection must not echo a 100 KB key back. */
function attributeField(key: string): string {
  return `attributes.${cutText(key, MAX_ECHOED_KEY)}`;
}

function parseAttributes(
  v: unknown,
  limits: EventLimits,
  max: TextLimits,
): [Record<string, AttributeValue>, number] {
  if (v === undefined || v === null) return [Object.create(null) as Record<string, AttributeValue>, 0];
  if (!isRecord(v)) fail('attributes_invalid', 'attributes');
  const keys = Object.keys(v);
  if (keys.length > limits.maxAttributes) fail('attributes_too_many', 'attributes');
  // Held in code-unit order: the stored text is canonical JSON, and storage can then serialise the
  // object as it is (see storage/postgres/copy-encoding.ts).
  sortKeys(keys);
  let bytes = 0;
  // Filled as a plain object, whose properties stay in V8's fast mode (JSON.stringify of it is
  // about twice as fast), and given a null prototype once filled. Safe only because every reserved
  // key is refused before it is assigned: `__proto__` would otherwise hit the setter.
  const out: Record<string, AttributeValue> = {};
  for (const key of keys) {
    if (!isAttributeKey(key, max.attributeKey)) fail('attribute_key_invalid', attributeField(key));
    const value = v[key];
    if (typeof value === 'string') {
      if (value.length > max.attributeValue || !isStorableText(value)) {
        fail('attribute_value_invalid', attributeField(key));
      }
      bytes += value.length * 2;
    } else if (!(typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value)))) {
      fail('attribute_value_invalid', attributeField(key));
    }
    out[key] = value;
    bytes += key.length * 2 + ATTRIBUTE_OVERHEAD_BYTES;
  }
  return [Object.setPrototypeOf(out, null) as Record<string, AttributeValue>, bytes];
}

function validateOrThrow(
  raw: unknown,
  limits: EventLimits,
  now: number,
): { event: TelemetryEvent; bytes: number } {
  if (!isRecord(raw)) fail('not_an_object');
  const max = textLimits(limits);
  const { type, name, ts, source } = raw;
  // No id at all: the collector assigns one (docs/http-api.md: such an event cannot be deduplicated).
  const id = raw.id === undefined ? assignedEventId(now) : raw.id;
  if (typeof id !== 'string' || !isUuid(id)) fail('id_invalid', 'id');
  if (typeof type !== 'string' || !(EVENT_TYPES as readonly string[]).includes(type))
    fail('type_invalid', 'type');
  if (typeof name !== 'string' || !isDottedName(name)) fail('name_invalid', 'name');
  if (name.length > max.name) fail('name_too_long', 'name');
  if (typeof ts !== 'number' || !Number.isSafeInteger(ts)) fail('ts_invalid', 'ts');
  if (!isTsInWindow(ts, now, limits)) fail('ts_out_of_range', 'ts');
  if (!isRecord(source) || typeof source.app !== 'string' || source.app.length === 0) {
    fail('source_invalid', 'source');
  }
  if (!isAppName(source.app, max.app)) fail('source_invalid', 'source.app');
  const version = optionalString(source.version, max.version, 'source_field_invalid', 'source.version');
  const env = optionalString(source.env, max.env, 'source_field_invalid', 'source.env');

  const eventType = type as EventType;
  let value: number | null = null;
  let summary: MetricSummary | null = null;
  if (eventType === 'metric') {
    if (raw.summary !== undefined && raw.summary !== null) {
      if (raw.value !== undefined && raw.value !== null) fail('value_invalid', 'value');
      summary = parseSummary(raw.summary);
    } else if (typeof raw.value === 'number' && Number.isFinite(raw.value)) {
      if (!isWithinMetricBound(raw.value)) fail('value_out_of_range', 'value');
      value = raw.value;
    } else {
      fail('value_invalid', 'value');
    }
  }
  const error = eventType === 'error' ? parseError(raw.error, max) : null;
  const message = optionalString(raw.message, max.message, 'message_invalid', 'message');
  const [attributes, attributeBytes] = parseAttributes(raw.attributes, limits, max);

  const strings =
    name.length +
    source.app.length +
    (version?.length ?? 0) +
    (env?.length ?? 0) +
    (message?.length ?? 0) +
    (error ? error.message.length + (error.kind?.length ?? 0) + (error.stack?.length ?? 0) : 0);
  const event: TelemetryEvent = {
    id: id.toLowerCase(),
    type: eventType,
    name,
    ts,
    app: source.app,
    version,
    env,
    value,
    summary,
    error,
    message,
    attributes,
  };
  return { event, bytes: EVENT_OVERHEAD_BYTES + strings * 2 + attributeBytes };
}

/**
 * Validates and normalises one event of the wire contract (docs/ARCHITECTURE.md, v1).
 * Never throws: an invalid event yields a stable rejection reason.
 * `bytes` is an estimate of the event's in-memory size, used to bound lanes.
 */
export function validateEvent(raw: unknown, limits: EventLimits, now: number): Validation {
  try {
    const { event, bytes } = validateOrThrow(raw, limits, now);
    return { ok: true, event, bytes };
  } catch (err) {
    if (err instanceof Reject) return { ok: false, rejection: err.rejection };
    throw err;
  }
}
