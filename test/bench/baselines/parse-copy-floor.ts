/**
 * Baseline (d), the floor of any collector on this platform: a bare `node:http` server that reads
 * each `POST /v1/events` body, `JSON.parse`s it, answers 202 with the count (as
 * `SLUICE_ACK=queued` does) and writes one COPY text line per event into the Sluice schema,
 * batched like the collector (a transaction of COPYs per `BENCH_FLOOR_BATCH` events or per 50 ms,
 * one connection). No validation, normalisation, dedupe, backpressure or metrics: what it costs
 * per event is what the platform costs (HTTP, `JSON.parse`, building and sending COPY text), the
 * least a collector that does the rest can spend. `BENCH_PORT`, `BENCH_DATABASE_URL`,
 * `BENCH_FLOOR_BATCH`.
 */
import { createServer, type ServerResponse } from 'node:http';
import pg from 'pg';
import { copyField as field, copyIn } from '../copy-text';
import type { WireEvent } from '../workload';

const BATCH = Number(process.env.BENCH_FLOOR_BATCH ?? 2000);
const FLUSH_MS = 50;
/** Events buffered before the floor refuses with 503: a run must not grow without bound. */
const MAX_BUFFERED = 200_000;
const METRICS_SQL =
  'COPY metric_samples (id, ts, app, name, version, env, value, message, attributes) FROM STDIN';
const EVENTS_SQL =
  'COPY events (id, ts, type, app, name, version, env, message, error_message, error_kind, error_stack, attributes) FROM STDIN';

/** COPY text per table, one buffer per request: what waits for the flush is bytes, not strings. */
let metrics: Buffer[] = [];
let others: Buffer[] = [];
let buffered = 0;
let writing = false;

/** The request's events as COPY text, one buffer per table (empty when it has none of that table). */
function add(events: readonly WireEvent[]): void {
  let m = '';
  let o = '';
  for (const e of events) {
    const s = e.source;
    const head = `${e.id}\t${e.ts}\t`;
    const attributes = field(JSON.stringify(e.attributes));
    if (e.type === 'metric') {
      m += `${head}${field(s.app)}\t${field(e.name)}\t${field(s.version)}\t${field(s.env)}\t${field(e.value)}\t${field(e.message)}\t${attributes}\n`;
    } else {
      const err = e.error;
      o += `${head}${field(e.type)}\t${field(s.app)}\t${field(e.name)}\t${field(s.version)}\t${field(s.env)}\t${field(e.message)}\t${field(err?.message)}\t${field(err?.kind)}\t${field(err?.stack)}\t${attributes}\n`;
    }
  }
  if (m !== '') metrics.push(Buffer.from(m, 'utf8'));
  if (o !== '') others.push(Buffer.from(o, 'utf8'));
  buffered += events.length;
}

const client = new pg.Client({ connectionString: process.env.BENCH_DATABASE_URL });

async function flush(): Promise<void> {
  if (writing || buffered === 0) return;
  writing = true;
  const [m, o] = [metrics, others];
  metrics = [];
  others = [];
  buffered = 0;
  try {
    await client.query('BEGIN');
    if (m.length > 0) await copyIn(client, METRICS_SQL, m);
    if (o.length > 0) await copyIn(client, EVENTS_SQL, o);
    await client.query('COMMIT');
  } finally {
    writing = false;
  }
  if (buffered >= BATCH) await flush();
}

function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v1/events') {
    return req.url === '/readyz' ? answer(res, 200, JSON.stringify({ ready: true })) : answer(res, 404, '{}');
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (buffered >= MAX_BUFFERED) return answer(res, 503, '{}');
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    const doc = JSON.parse(body.toString('utf8')) as { events: WireEvent[] };
    add(doc.events);
    if (buffered >= BATCH) void flush();
    answer(res, 202, `{"accepted":${doc.events.length},"rejected":[]}`);
  });
});

void client.connect().then(() => {
  setInterval(() => void flush(), FLUSH_MS);
  server.listen(Number(process.env.BENCH_PORT), '127.0.0.1');
});
// What is buffered is written before the exit: the run counts stored rows.
process.on('SIGTERM', () => {
  server.close();
  const done = (): void => void client.end().then(() => process.exit(0));
  const drain = (): void => {
    if (writing) return void setTimeout(drain, 10);
    void flush().then(done, done);
  };
  drain();
});
