import pg from 'pg';

/** Count of stored rows (both tables) among `ids`, read straight from PostgreSQL. */
export async function countStored(url: string, ids: readonly string[]): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM events WHERE id = ANY($1::uuid[]))
            + (SELECT count(*) FROM metric_samples WHERE id = ANY($1::uuid[])) AS n`,
      [ids],
    );
    return Number(r.rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

/** How often each of `ids` is stored, over both tables. Ids never stored are absent. */
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

/** Ids of `ids` not stored exactly once (missing or duplicated, over both tables), with their count. */
export async function idsNotStoredOnce(
  url: string,
  ids: readonly string[],
): Promise<Array<[string, number]>> {
  const counts = await storedCounts(url, ids);
  return ids.map((id): [string, number] => [id, counts.get(id) ?? 0]).filter(([, n]) => n !== 1);
}
