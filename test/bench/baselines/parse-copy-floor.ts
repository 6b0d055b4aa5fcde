/**
 * Baseline (d), the floor of any collector on this platform: a bare `node:http` server
 * (`floor-server.ts`) that `JSON.parse`s each `POST /v1/events` body and writes each metric
 * sample's binary COPY fields (sample-fields.ts, as the typed path writes them) and one COPY text
 * line per other event into the Sluice schema. No validation, normalisation, dedupe, backpressure
 * or metrics: what it costs per event is what the platform costs (HTTP, `JSON.parse`, building
 * and sending COPY data), the least a collector that does the rest can spend.
 */
import { attrs } from '../../support/telemetry-events';
import { toCopyLine } from '../../../src/storage/postgres/copy-encoding';
import { copyField as field } from '../copy-text';
import type { WireEvent } from '../workload';
import { serveFloor, type FloorRequest } from './floor-server';

const EVENTS_SQL =
  'COPY events (id, ts, type, app, name, version, env, message, error_message, error_kind, error_stack, attributes) FROM STDIN';

/** The request's samples' fields, and its other events as COPY text. */
function encode(body: Buffer): FloorRequest {
  const events = (JSON.parse(body.toString('utf8')) as { events: WireEvent[] }).events;
  const m: Buffer[] = [];
  let o = '';
  for (const e of events) {
    const s = e.source;
    if (e.type === 'metric') {
      const sample = toCopyLine({
        id: e.id,
        type: 'metric',
        name: e.name,
        ts: e.ts,
        app: s.app,
        version: s.version,
        env: s.env,
        value: e.value ?? null,
        summary: null,
        error: null,
        message: e.message ?? null,
        attributes: attrs(e.attributes),
      });
      m.push(sample.bytes);
    } else {
      const err = e.error;
      const attributes = field(JSON.stringify(e.attributes));
      o += `${e.id}\t${e.ts}\t${field(e.type)}\t${field(s.app)}\t${field(e.name)}\t${field(s.version)}\t${field(s.env)}\t${field(e.message)}\t${field(err?.message)}\t${field(err?.kind)}\t${field(err?.stack)}\t${attributes}\n`;
    }
  }
  return {
    events: events.length,
    metrics: m.length === 0 ? null : m,
    others: o === '' ? null : Buffer.from(o, 'utf8'),
  };
}

serveFloor(encode, EVENTS_SQL);
