/**
 * Floor of the overload row: a bare `node:http` server that refuses every `POST /v1/events` from
 * its request line with the overload gate's answer (429 `overloaded`, `Retry-After`), and does
 * nothing else. Offered the same open loop as the collector at 3 × saturation, its 429 p99 is what
 * the box, the load generator and Node's HTTP server alone cost. Port from `BENCH_PORT`; run with
 * the collector's memory flags.
 */
import { createServer } from 'node:http';

const BODY = JSON.stringify({ accepted: 0, rejected: [], error: 'overloaded', message: 'overloaded' });

const server = createServer((req, res) => {
  if (req.method === 'POST') {
    res.writeHead(429, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(BODY),
      'Retry-After': '1',
    });
    res.end(BODY);
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end('{"ready":true}');
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.BENCH_PORT), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
