import type { EventLimits } from '../../src/events/limits';
import type { TelemetryEvent } from '../../src/events/types';
import { validateEvent } from '../../src/events/validate';
import { EventGenerator } from './workload';
import { eventLimits } from '../../src/compose/storage';
import { loadConfig } from '../../src/config/load';

/** The collector's default limits, so events are normalised as at intake. */
const LIMITS: EventLimits = eventLimits(loadConfig({}));

/**
 * `count` events of the bench workload as the collector holds them after validation: what the
 * in-process storage runs write, so that they write the same rows the HTTP runs do.
 */
export function telemetryEvents(count: number, seed: number): TelemetryEvent[] {
  const generator = new EventGenerator(seed);
  const now = Date.now();
  const out: TelemetryEvent[] = [];
  for (let i = 0; i < count; i++) {
    const v = validateEvent(generator.next(now), LIMITS, now);
    if (!v.ok) throw new Error(`bench workload produced an invalid event: ${JSON.stringify(v.rejection)}`);
    out.push(v.event);
  }
  return out;
}
