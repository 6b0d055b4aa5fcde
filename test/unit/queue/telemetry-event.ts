import type { TelemetryEvent } from '../../../src/events/types';

let n = 0;

/** A valid metric event with a fresh id and ts each call (`overrides` on top). */
export function telemetryEvent(overrides: Partial<TelemetryEvent> = {}): TelemetryEvent {
  n++;
  return {
    id: `0190f3c2-0000-7000-8000-${String(n).padStart(12, '0')}`,
    type: 'metric',
    name: 'render.frame_drop',
    ts: 1_764_590_400_000 + n,
    app: 'web-shop',
    version: null,
    env: null,
    value: n,
    summary: null,
    error: null,
    message: null,
    attributes: {},
    ...overrides,
  };
}
