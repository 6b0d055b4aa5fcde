import type Database from 'better-sqlite3';
import { getJson } from './http';

/** How often each id of `app` is stored, read back page by page through `GET /v1/events`. */
export async function storedIdCounts(baseUrl: string, app: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const q = new URLSearchParams({ app, limit: '1000', ...(cursor ? { cursor } : {}) });
    const res = await getJson(`${baseUrl}/v1/events?${q.toString()}`);
    if (res.status !== 200)
      throw new Error(`GET /v1/events answered ${res.status}: ${JSON.stringify(res.body)}`);
    const body = res.body as { events: Array<{ id: string }>; next_cursor: string | null };
    for (const e of body.events) counts.set(e.id, (counts.get(e.id) ?? 0) + 1);
    cursor = body.next_cursor;
    if (cursor === null) return counts;
  }
  throw new Error('GET /v1/events kept paging past 1000 pages');
}

/** Ids of `ids` not stored exactly once (missing or duplicated), with their count. */
export async function notStoredOnceViaApi(
  baseUrl: string,
  app: string,
  ids: readonly string[],
): Promise<Array<[string, number]>> {
  const counts = await storedIdCounts(baseUrl, app);
  return ids.map((id): [string, number] => [id, counts.get(id) ?? 0]).filter(([, n]) => n !== 1);
}

/** Ids of `ids` not stored exactly once among the metric samples of an open SQLite file. */
export function samplesNotStoredOnce(db: Database.Database, ids: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const { id } of db.prepare('SELECT id FROM metric_samples').all() as Array<{ id: string }>) {
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return ids.filter((id) => counts.get(id) !== 1);
}
