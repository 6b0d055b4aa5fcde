/**
 * The floor of any Node.js server of the JSON wire: a bare `node:http` server that reads each
 * `POST /v1/events` body, parses it with `JSON.parse` and answers 202 with its count of events, as
 * `SLUICE_ACK=queued` does. It validates nothing and stores nothing: what it spends per event is
 * the least a collector written in Node.js spends to take the body in, before any of its own work.
 * A process of its own, like the collector; port from `BENCH_PORT`.
 */
import { createServer, type ServerResponse } from 'node:http';

const READY = JSON.stringify({ ready: true });

function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/readyz') return answer(res, 200, READY);
  if (req.method !== 'POST' || req.url !== '/v1/events') return answer(res, 404, '{}');
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    let events: unknown;
    try {
      events = (JSON.parse(body.toString('utf8')) as { events?: unknown }).events;
    } catch {
      return answer(res, 400, '{"error":"not JSON"}');
    }
    if (!Array.isArray(events)) return answer(res, 400, '{"error":"no events array"}');
    answer(res, 202, `{"accepted":${events.length},"rejected":[]}`);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.BENCH_PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
