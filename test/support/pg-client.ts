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
