/**
 * Baseline (b), the platform's HTTP limit: a bare `node:http` server answering `POST /v1/events`
 * with 202 and doing nothing else (the body is not read; Node discards it). What a user measures a
 * collector against: no framework at all. A process of its own, like the collector; port from
 * `BENCH_PORT`.
 */
import { createServer } from 'node:http';

const ACCEPTED = JSON.stringify({ accepted: 0, rejected: [] });
const READY = JSON.stringify({ ready: true });

const server = createServer((req, res) => {
  const path = req.url ?? '';
  if (req.method === 'POST' && path === '/v1/events') {
    res.writeHead(202, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(ACCEPTED),
    });
    res.end(ACCEPTED);
    return;
  }
  if (req.method === 'GET' && path === '/readyz') {
    res.writeHead(200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(READY),
    });
    res.end(READY);
    return;
  }
  res.writeHead(404, { 'Content-Length': 0 });
  res.end();
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.BENCH_PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
