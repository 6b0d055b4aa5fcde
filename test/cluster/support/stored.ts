import pg from 'pg';

/** How often each id is stored, over both tables. Ids never stored are absent. */
export async function storedCounts(url: string, ids: readonly string[]): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const r = await client.query<{ id: string; n: string }>(
      `SELECT id::text AS id, count(*) AS n FROM (
         SELECT id FROM events WHERE id = ANY($1::uuid[])
         UNION ALL
         SELECT id FROM metric_samples WHERE id = ANY($1::uuid[])
       ) t GROUP BY id`,
      [ids],
    );
    return new Map(r.rows.map((row) => [row.id, Number(row.n)]));
  } finally {
    await client.end();
  }
}

/** Ids of `ids` not stored exactly once (missing or duplicated), with their count. */
export async function notStoredOnce(url: string, ids: readonly string[]): Promise<Array<[string, number]>> {
  const counts = await storedCounts(url, ids);
  return ids.map((id): [string, number] => [id, counts.get(id) ?? 0]).filter(([, n]) => n !== 1);
}
