import crypto from 'node:crypto';
import type { AttributeValue, Attributes, EventType, TelemetryEvent } from '../../src/events/types';

/** Attributes as validation makes them: a null-prototype object. */
export function attrs(entries: Record<string, AttributeValue> = {}): Attributes {
  const out: Record<string, AttributeValue> = Object.create(null);
  for (const [k, v] of Object.entries(entries)) out[k] = v;
  return out;
}

/** A validated event of `type` (what storage takes), a minute before `now`, with `over` on top. */
export function telemetryEvent(
  type: EventType,
  over: Partial<TelemetryEvent> = {},
  now = Date.now(),
): TelemetryEvent {
  return {
    id: crypto.randomUUID(),
    type,
    name: `${type}.thing`,
    ts: now - 60_000,
    app: 'web-shop',
    version: null,
    env: null,
    value: type === 'metric' ? 1 : null,
    summary: null,
    error: type === 'error' ? { message: 'boom', kind: null, stack: null } : null,
    message: null,
    attributes: attrs(),
    ...over,
  };
}
