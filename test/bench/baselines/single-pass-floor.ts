/**
 * Baseline (d′), the floor of the collector's own design: baseline (d) with the collector's single
 * pass (`RequestScan` and `copyLineFromScan`, src/events/scan/ and src/storage/postgres/) in place
 * of `JSON.parse` and string building. A bare `node:http` server that reads each
 * `POST /v1/events` body, scans and validates it into COPY lines straight from its bytes, answers
 * 202 with the count (as `SLUICE_ACK=queued` does) and COPYs the lines into the Sluice schema,
 * batched like the collector (a transaction per `BENCH_FLOOR_BATCH` events or per 50 ms, one
 * connection). No lanes, rate limit, dedupe, loss map, metrics or backpressure, no ts order, and
 * an event the pass leaves to the typed path is not written: what it costs per event is the least
 * a collector built on the single pass can spend. `BENCH_PORT`, `BENCH_DATABASE_URL`,
 * `BENCH_FLOOR_BATCH`.
 */
import { createServer, type ServerResponse } from 'node:http';
import pg from 'pg';
import { eventLimits } from '../../../src/compose/storage';
import { loadConfig } from '../../../src/config/load';
import { RequestScan, type ScanHandlers } from '../../../src/events/scan/scan-request';
import { columnList, EVENTS, METRIC_SAMPLES } from '../../../src/storage/layout/columns';
import { copyLineFromScan } from '../../../src/storage/postgres/copy-line-from-scan';
import { copyIn } from '../copy-text';

const BATCH = Number(process.env.BENCH_FLOOR_BATCH ?? 2000);
const FLUSH_MS = 50;
/** Events buffered before the floor refuses with 503: a run must not grow without bound. */
const MAX_BUFFERED = 200_000;
const MAX_EVENTS = 1000;
const LIMITS = eventLimits(loadConfig({}));
const METRICS_SQL = `COPY ${METRIC_SAMPLES.table} (${columnList(METRIC_SAMPLES)}) FROM STDIN`;
const EVENTS_SQL = `COPY ${EVENTS.table} (${columnList(EVENTS)}) FROM STDIN`;

/** COPY lines per table: each a view into the pass's shared slabs, as the collector holds them. */
let metrics: Buffer[] = [];
let others: Buffer[] = [];
let buffered = 0;
let writing = false;

const handlers: ScanHandlers = {
  fast(fields, _index, scan) {
    const line = copyLineFromScan(scan.text, fields);
    (line.metric ? metrics : others).push(line.bytes);
    buffered++;
  },
  slow() {
    // Left to the typed path, which this floor does not have: the bench's bodies have none.
  },
};

/** Scans `body` into buffered lines; the events it holds, or null when the pass does not read it. */
function add(body: Buffer): number | null {
  const scan = RequestScan.open(body, LIMITS, Date.now(), MAX_EVENTS, () => undefined);
  if (scan === null || scan.step(Number.MAX_SAFE_INTEGER, handlers) === 'fallback') return null;
  return scan.count;
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
    if (m.length > 0) await copyIn(client, METRICS_SQL, [Buffer.concat(m)]);
    if (o.length > 0) await copyIn(client, EVENTS_SQL, [Buffer.concat(o)]);
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
    const events = add(body);
    if (events === null) return answer(res, 400, '{"error":"not read by the single pass"}');
    if (buffered >= BATCH) void flush();
    answer(res, 202, `{"accepted":${events},"rejected":[]}`);
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
