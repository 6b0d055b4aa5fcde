import type { TelemetryEvent } from './types';

/** Fixed per-event overhead of the in-memory representation (bytes). */
export const EVENT_OVERHEAD_BYTES = 256;
/** Fixed overhead of one attribute (bytes), besides its key and string value. */
export const ATTRIBUTE_OVERHEAD_BYTES = 48;

/**
 * An estimate of `event`'s in-memory size (bytes), which bounds the lanes: two bytes per code unit
 * of its strings plus fixed overheads. Validation computes the same sum as it goes
 * (events/validate.ts); this is it for an event built typed (the OTLP front).
 */
export function eventBytes(event: TelemetryEvent): number {
  const { error } = event;
  let units =
    event.name.length +
    event.app.length +
    (event.version?.length ?? 0) +
    (event.env?.length ?? 0) +
    (event.message?.length ?? 0) +
    (error ? error.message.length + (error.kind?.length ?? 0) + (error.stack?.length ?? 0) : 0);
  let bytes = EVENT_OVERHEAD_BYTES;
  for (const key in event.attributes) {
    const value = event.attributes[key];
    units += key.length + (typeof value === 'string' ? value.length : 0);
    bytes += ATTRIBUTE_OVERHEAD_BYTES;
  }
  return bytes + units * 2;
}
