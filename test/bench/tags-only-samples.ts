import type { EventLimits } from '../../src/events/limits';
import type { TelemetryEvent } from '../../src/events/types';
import { validateEvent } from '../../src/events/validate';
import { eventLimits } from '../../src/compose/storage';
import { loadConfig } from '../../src/config/load';
import { metricPoints } from './metric-points';

const LIMITS: EventLimits = eventLimits(loadConfig({}));

/**
 * `count` of the `influx` suite's tags-only points (one name, an app, a route and a browser: 144
 * series) as the collector holds them after validation, for the in-process storage runs.
 */
export function tagsOnlySamples(count: number, seed: number): TelemetryEvent[] {
  const now = Date.now();
  const out: TelemetryEvent[] = [];
  for (const body of metricPoints(Math.ceil(count / 100) * 100, seed).tagsJson) {
    const { events } = JSON.parse(body.bytes.toString('utf8')) as { events: unknown[] };
    for (const wire of events) {
      const v = validateEvent(wire, LIMITS, now);
      if (!v.ok) throw new Error(`tags-only point is invalid: ${JSON.stringify(v.rejection)}`);
      out.push(v.event);
    }
  }
  return out.slice(0, count);
}
