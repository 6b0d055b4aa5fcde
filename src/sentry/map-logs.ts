import { storableText } from '../events/cut-text';
import { isTsInWindow } from '../events/ts-window';
import type { TelemetryEvent } from '../events/types';
import { AttributeBag } from '../otlp/attributes';
import { deterministicId } from '../otlp/event-id';
import { list, record } from '../otlp/scalars';
import type { SentryMappingContext } from './map-event';

/** The name of every event a Sentry log becomes. */
export const LOG_NAME = 'sentry.log';

/** One `log` item's mapping: its events, and how many of its logs could not be one. */
export interface MappedSentryLogs {
  readonly events: TelemetryEvent[];
  readonly unmapped: number;
  readonly droppedAttributes: number;
}

interface SentryLog {
  readonly timestamp?: unknown;
  readonly level?: unknown;
  readonly body?: unknown;
  readonly trace_id?: unknown;
  readonly attributes?: unknown;
}

/**
 * A `log` item (`{items: [...]}`, https://develop.sentry.dev/sdk/telemetry/logs/) → one `log`
 * event per log, named `sentry.log`: body → message, `timestamp` (seconds) → ts, attributes
 * `sentry.release` → version and `sentry.environment` → env; attributes `sentry.level`,
 * `trace_id`, then the log's own (`{value, type}` scalars; the other `sentry.*` ones describe the
 * SDK and are left out). A log has no id: its id is digested from the app and the log, so a
 * resent item is stored once.
 */
export function mapSentryLogs(payload: unknown, ctx: SentryMappingContext): MappedSentryLogs {
  const { limits } = ctx;
  const events: TelemetryEvent[] = [];
  let unmapped = 0;
  let droppedAttributes = 0;
  for (const raw of list<unknown>(record<{ items?: unknown }>(payload)?.items)) {
    const log = record<SentryLog>(raw);
    const ts = typeof log?.timestamp === 'number' ? Math.round(log.timestamp * 1000) : NaN;
    if (log === null || !Number.isFinite(ts) || !isTsInWindow(ts, ctx.now, limits)) {
      unmapped++;
      continue;
    }
    const bag = new AttributeBag({
      maxAttributes: limits.maxAttributes,
      maxKeyLength: limits.maxAttributeKeyLength,
      maxStringLength: limits.maxStringLength,
    });
    if (typeof log.level === 'string' && log.level !== '') bag.set('sentry.level', log.level);
    if (typeof log.trace_id === 'string' && log.trace_id !== '') bag.set('trace_id', log.trace_id);
    const attributes = record<Record<string, unknown>>(log.attributes) ?? {};
    let version: string | null = null;
    let env: string | null = null;
    for (const [key, wrapped] of Object.entries(attributes)) {
      const value = record<{ value?: unknown }>(wrapped)?.value;
      if (key === 'sentry.release' && typeof value === 'string' && value !== '') {
        version = storableText(value, limits.maxSourceLength);
      } else if (key === 'sentry.environment' && typeof value === 'string' && value !== '') {
        env = storableText(value, limits.maxSourceLength);
      } else if (!key.startsWith('sentry.')) {
        if (typeof value === 'string' || typeof value === 'boolean') bag.set(key, value);
        else if (typeof value === 'number' && Number.isFinite(value)) bag.set(key, value);
      }
    }
    droppedAttributes += bag.dropped;
    const body = typeof log.body === 'string' ? storableText(log.body, limits.maxStringLength) : '';
    events.push({
      id: deterministicId('sentry.log', ctx.app, JSON.stringify(raw)),
      type: 'log',
      name: LOG_NAME,
      ts,
      app: ctx.app,
      version,
      env,
      value: null,
      summary: null,
      error: null,
      message: body === '' ? null : body,
      attributes: bag.toObject(),
    });
  }
  return { events, unmapped, droppedAttributes };
}
