import type { EventLimits } from '../../../src/events/limits';
import type { MappingContext } from '../../../src/otlp/mapped-export';

export const LIMITS: EventLimits = {
  maxAttributes: 32,
  maxAttributeKeyLength: 64,
  maxStringLength: 1024,
  maxStackLength: 16384,
  maxNameLength: 128,
  maxSourceLength: 128,
  maxAgeMs: 7 * 86_400_000,
  maxFutureMs: 300_000,
};

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
