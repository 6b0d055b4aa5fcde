import pg from 'pg';
import { copyIn } from './copy-text';

/** One transaction of a COPY run: one `COPY` per table, payloads built before the clock starts. */
export interface CopyChunk {
  readonly events: number;
  readonly parts: ReadonlyArray<{ readonly sql: string; readonly payload: string | readonly Buffer[] }>;
}

export interface CopyRunResult {
  readonly events: number;
  readonly elapsedMs: number;
  readonly eventsPerSecond: number;
  readonly transactions: number;
  /** Events of the warm-up chunks, sent before the clock started. */
  readonly warmupEvents: number;
}

/** Chunks sent before the clock starts: connection, catalog caches and first pages warm. */
const WARMUP_CHUNKS = 3;

async function send(client: pg.Client, chunk: CopyChunk): Promise<void> {
  await client.query('BEGIN');
  for (const part of chunk.parts) await copyIn(client, part.sql, part.payload);
  await client.query('COMMIT');
}

/**
 * Sends the chunks in order on one connection, each `BEGIN; COPY …; COMMIT`, until all are sent
 * or `maxMs` has passed. The first few warm up and are not counted; only the database round trips
 * of the rest are timed.
 */
export async function timeCopy(
  url: string,
  chunks: readonly CopyChunk[],
  maxMs: number,
): Promise<CopyRunResult> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const warmup = Math.min(WARMUP_CHUNKS, Math.floor(chunks.length / 10));
    let warmupEvents = 0;
    for (const chunk of chunks.slice(0, warmup)) {
      await send(client, chunk);
      warmupEvents += chunk.events;
    }
    let events = 0;
    let transactions = 0;
    const started = performance.now();
    for (const chunk of chunks.slice(warmup)) {
      if (performance.now() - started > maxMs) break;
      await send(client, chunk);
      events += chunk.events;
      transactions++;
    }
    const elapsedMs = performance.now() - started;
    return { events, elapsedMs, eventsPerSecond: (events / elapsedMs) * 1000, transactions, warmupEvents };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Splits `items` into consecutive slices of at most `size`. */
export function chunked<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
