/**
 * The server of the floor baselines (d) and (d′): a bare `node:http` server that hands each
 * `POST /v1/events` body to the floor's `encode`, answers 202 with the count (as
 * `SLUICE_ACK=queued` does) and COPYs what `encode` made into the Sluice schema, batched like the
 * collector (a transaction of COPYs per `BENCH_FLOOR_BATCH` events or per 50 ms, one connection).
 * What is buffered is written before the exit on SIGTERM: a run counts stored rows.
 * `BENCH_PORT`, `BENCH_DATABASE_URL`, `BENCH_FLOOR_BATCH`.
 */
import { createServer, type ServerResponse } from 'node:http';
import pg from 'pg';
import { METRIC_BLOCKS_COPY, metricBlocksCopy } from '../../../src/storage/postgres/metric-blocks-copy';
import { copyIn } from '../copy-text';

/**
 * One request's events (null when it has none of a table): metric samples' binary COPY fields
 * (sample-fields.ts), written as the collector writes them (keys and blocks,
 * metric-blocks-copy.ts), and the other events as one buffer of COPY text.
 */
export interface FloorRequest {
  readonly events: number;
  readonly metrics: readonly Buffer[] | null;
  readonly others: Buffer | null;
}

const BATCH = Number(process.env.BENCH_FLOOR_BATCH ?? 2000);
const FLUSH_MS = 50;
/** Events buffered before the floor refuses with 503: a run must not grow without bound. */
const MAX_BUFFERED = 200_000;

/**
 * Serves the floor. `encode` turns a body into its COPY text; null refuses it (400). `eventsSql`
 * names the columns of the events' lines.
 */
export function serveFloor(encode: (body: Buffer) => FloorRequest | null, eventsSql: string): void {
  /** Samples' fields and events' COPY text, per request: what waits for the flush is bytes, not strings. */
  let metrics: Buffer[] = [];
  let others: Buffer[] = [];
  let buffered = 0;
  let writing = false;
  const client = new pg.Client({ connectionString: process.env.BENCH_DATABASE_URL });

  const flush = async (): Promise<void> => {
    if (writing || buffered === 0) return;
    writing = true;
    const [m, o] = [metrics, others];
    metrics = [];
    others = [];
    buffered = 0;
    try {
      await client.query('BEGIN');
      if (m.length > 0) {
        const blocks = metricBlocksCopy(m);
        await copyIn(client, METRIC_BLOCKS_COPY, [blocks.blocks]);
      }
      if (o.length > 0) await copyIn(client, eventsSql, o);
      await client.query('COMMIT');
    } finally {
      writing = false;
    }
    if (buffered >= BATCH) await flush();
  };

  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/events') {
      return req.url === '/readyz'
        ? answer(res, 200, JSON.stringify({ ready: true }))
        : answer(res, 404, '{}');
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (buffered >= MAX_BUFFERED) return answer(res, 503, '{}');
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      const request = encode(body);
      if (request === null) return answer(res, 400, '{"error":"not read by this floor"}');
      if (request.metrics !== null) metrics.push(...request.metrics);
      if (request.others !== null) others.push(request.others);
      buffered += request.events;
      if (buffered >= BATCH) void flush();
      answer(res, 202, `{"accepted":${request.events},"rejected":[]}`);
    });
  });

  void client.connect().then(() => {
    setInterval(() => void flush(), FLUSH_MS);
    server.listen(Number(process.env.BENCH_PORT), '127.0.0.1');
  });
  process.on('SIGTERM', () => {
    server.close();
    const done = (): void => void client.end().then(() => process.exit(0));
    const drain = (): void => {
      if (writing) return void setTimeout(drain, 10);
      void flush().then(done, done);
    };
    drain();
  });
}

function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}
