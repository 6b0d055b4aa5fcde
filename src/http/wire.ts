import type { TelemetryEvent } from '../events/types';

/** An event as the read API returns it: the shape the SDK sent (docs/ARCHITECTURE.md, wire contract v1). */
export function toWire(e: TelemetryEvent): Record<string, unknown> {
  const source: Record<string, string> = { app: e.app };
  if (e.version !== null) source.version = e.version;
  if (e.env !== null) source.env = e.env;
  const out: Record<string, unknown> = { id: e.id, type: e.type, name: e.name, ts: e.ts, source };
  if (e.value !== null) out.value = e.value;
  if (e.summary !== null) out.summary = e.summary;
  if (e.error !== null) {
    const error: Record<string, string> = { message: e.error.message };
    if (e.error.kind !== null) error.kind = e.error.kind;
    if (e.error.stack !== null) error.stack = e.error.stack;
    out.error = error;
  }
  if (e.message !== null) out.message = e.message;
  out.attributes = { ...e.attributes };
  return out;
}
