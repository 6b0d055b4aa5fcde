/**
 * Baseline (c), what a user would write first: Express with `express.json()` and one `INSERT` per
 * event into the Sluice schema, awaited in turn, then 202. No validation, no batching, no queue.
 * A process of its own; `BENCH_PORT`, `BENCH_DATABASE_URL`.
 */
import express from 'express';
import pg from 'pg';

interface NaiveEvent {
  id: string;
  type: string;
  name: string;
  ts: number;
  source: { app: string; version?: string; env?: string };
  value?: number;
  message?: string;
  error?: { message: string; kind?: string; stack?: string };
  attributes?: Record<string, unknown>;
}

const pool = new pg.Pool({ connectionString: process.env.BENCH_DATABASE_URL });
pool.on('error', () => undefined);

function insert(e: NaiveEvent): Promise<unknown> {
  const attributes = JSON.stringify(e.attributes ?? {});
  if (e.type === 'metric') {
    // The schema's metric sample: a block of one sample (migration 012: no key row).
    return pool.query(
      `INSERT INTO metric_blocks (bucket, app, name, id, ts, version, env, value, count, min, max, sum, message, attributes)
       SELECT $2::bigint - $2::bigint % 60000, $3, $4, ARRAY[$1::uuid], ARRAY[$2::bigint], ARRAY[$5::text],
              ARRAY[$6::text], ARRAY[$7::float8], ARRAY[NULL::bigint], ARRAY[NULL::float8], ARRAY[NULL::float8],
              ARRAY[NULL::float8], ARRAY[NULL::text], ARRAY[$8::text]`,
      [
        e.id,
        e.ts,
        e.source.app,
        e.name,
        e.source.version ?? null,
        e.source.env ?? null,
        e.value ?? null,
        attributes,
      ],
    );
  }
  return pool.query(
    `INSERT INTO events (id, ts, type, app, name, version, env, message, error_message, error_kind, error_stack, attributes)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING`,
    [
      e.id,
      e.ts,
      e.type,
      e.source.app,
      e.name,
      e.source.version ?? null,
      e.source.env ?? null,
      e.message ?? null,
      e.error?.message ?? null,
      e.error?.kind ?? null,
      e.error?.stack ?? null,
      attributes,
    ],
  );
}

const app = express();
app.use(express.json({ limit: '1mb' }));
app.post('/v1/events', async (req, res) => {
  const events = (req.body as { events: NaiveEvent[] }).events;
  try {
    for (const e of events) await insert(e);
    res.status(202).json({ accepted: events.length, rejected: [] });
  } catch (err) {
    res.status(500).json({ error: (err as Error).message });
  }
});
app.get('/readyz', async (_req, res) => {
  try {
    await pool.query('SELECT 1');
    res.status(200).json({ ready: true });
  } catch {
    res.status(503).json({ ready: false });
  }
});

const server = app.listen(Number(process.env.BENCH_PORT), '127.0.0.1');
server.keepAliveTimeout = 65_000;
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));
