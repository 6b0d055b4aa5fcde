/**
 * Baseline (b), the HTTP limit: Express 5 answering `POST /v1/events` with 202 and doing nothing
 * else (the body is not even parsed). A process of its own, like the collector; port from
 * `BENCH_PORT`.
 */
import express from 'express';

const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.post('/v1/events', (_req, res) => {
  res.status(202).json({ accepted: 0, rejected: [] });
});
app.get('/readyz', (_req, res) => {
  res.status(200).json({ ready: true });
});

const server = app.listen(Number(process.env.BENCH_PORT), '127.0.0.1');
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => server.close(() => process.exit(0)));
