import type { EventLimits } from '../../../src/events/limits';
import type { TelemetryEvent } from '../../../src/events/types';
import { validateEvent } from '../../../src/events/validate';
import type { MappingContext } from '../../../src/otlp/mapped-export';
import { eventLimits } from '../../../src/compose/storage';
import { loadConfig } from '../../../src/config/load';

/** The collector's default event limits. */
export const LIMITS: EventLimits = eventLimits(loadConfig({}));

export const NOW = 1_764_590_400_000;

export function ctx(overrides: Partial<MappingContext> = {}): MappingContext {
  return { limits: LIMITS, keyApp: null, now: NOW, ...overrides };
}

/** Nanoseconds (as OTLP/JSON text) of an epoch-milliseconds time. */
export function nanos(ms: number): string {
  return `${ms}000000`;
}

export function kv(key: string, value: Record<string, unknown>) {
  return { key, value };
}

export const RESOURCE = {
  attributes: [
    kv('service.name', { stringValue: 'web-shop' }),
    kv('service.version', { stringValue: '1.4.2' }),
    kv('deployment.environment', { stringValue: 'prod' }),
    kv('host.name', { stringValue: 'box-1' }),
  ],
};

/** `e` in the wire contract's spelling (the shape `POST /v1/events` takes). */
function asWire(e: TelemetryEvent): Record<string, unknown> {
  return {
    id: e.id,
    type: e.type,
    name: e.name,
    ts: e.ts,
    source: { app: e.app, version: e.version, env: e.env },
    value: e.value,
    summary: e.summary,
    error: e.error,
    message: e.message,
    attributes: { ...e.attributes },
  };
}

/**
 * Asserts that the intake's validation of `e`'s wire form gives `e` back: the typed mapping built
 * exactly the event the intake would, within the same limits.
 */
export function expectValidAsBuilt(e: TelemetryEvent): void {
  const v = validateEvent(asWire(e), LIMITS, NOW);
  expect(v.ok ? v.event : v.rejection).toEqual(e);
  if (v.ok) expect(Object.keys(v.event.attributes)).toEqual(Object.keys(e.attributes));
}
