/**
 * Baseline (d), the floor of any collector on this platform: a bare `node:http` server
 * (`floor-server.ts`) that `JSON.parse`s each `POST /v1/events` body and writes one COPY text line
 * per event into the Sluice schema. No validation, normalisation, dedupe, backpressure or metrics:
 * what it costs per event is what the platform costs (HTTP, `JSON.parse`, building and sending
 * COPY text), the least a collector that does the rest can spend.
 */
import { copyField as field } from '../copy-text';
import type { WireEvent } from '../workload';
import { serveFloor, type FloorRequest } from './floor-server';

const EVENTS_SQL =
  'COPY events (id, ts, type, app, name, version, env, message, error_message, error_kind, error_stack, attributes) FROM STDIN';

/** The request's events as COPY text, one buffer per table. */
function encode(body: Buffer): FloorRequest {
  const events = (JSON.parse(body.toString('utf8')) as { events: WireEvent[] }).events;
  let m = '';
  let o = '';
  for (const e of events) {
    const s = e.source;
    const head = `${e.id}\t${e.ts}\t`;
    const attributes = field(JSON.stringify(e.attributes));
    if (e.type === 'metric') {
      m += `${head}${field(s.app)}\t${field(e.name)}\t${field(s.version)}\t${field(s.env)}\t${field(e.value)}\t\\N\t\\N\t\\N\t\\N\t${field(e.message)}\t${attributes}\n`;
    } else {
      const err = e.error;
      o += `${head}${field(e.type)}\t${field(s.app)}\t${field(e.name)}\t${field(s.version)}\t${field(s.env)}\t${field(e.message)}\t${field(err?.message)}\t${field(err?.kind)}\t${field(err?.stack)}\t${attributes}\n`;
    }
  }
  return {
    events: events.length,
    metrics: m === '' ? null : Buffer.from(m, 'utf8'),
    others: o === '' ? null : Buffer.from(o, 'utf8'),
  };
}

serveFloor(encode, EVENTS_SQL);
