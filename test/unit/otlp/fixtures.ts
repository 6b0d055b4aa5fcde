import type { EventLimits } from '../../../src/events/limits';
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
