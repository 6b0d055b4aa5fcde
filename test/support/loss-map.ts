import Database from 'better-sqlite3';
import pg from 'pg';
import { getJson, waitFor } from './http';

/** Where a test's collectors store: a PostgreSQL URL or a SQLite file. */
export type StorageAt =
  { readonly kind: 'postgres'; readonly url: string } | { readonly kind: 'sqlite'; readonly path: string };

/** Rows of `app` in both tables, straight from the database (not through the loss map). */
export async function rowsOfApp(at: StorageAt, app: string): Promise<number> {
  const sql = `SELECT (SELECT count(*) FROM events WHERE app = $1) + (SELECT count(*) FROM metric_samples WHERE app = $1) AS n`;
  if (at.kind === 'sqlite') {
    const db = new Database(at.path, { readonly: true });
    try {
      return Number((db.prepare(sql.replaceAll('$1', '?')).get(app, app) as { n: number }).n);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: at.url });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>(sql, [app])).rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}

export interface LossMapAnswer {
  generated: number;
  stored: number;
  lost: number;
  losses: Record<string, Record<string, number>>;
  pending: { sdk: number; pipeline: number };
  throttled: Record<string, number>;
  shed_requests: number;
  generated_unrecorded?: number;
  dropped_samples?: Record<string, number>;
  minutes?: Array<LossMapAnswer & { minute: number }>;
}

/** `GET /v1/outcomes` of `app` over the last hour and the next two minutes (with `headers`: a read key). */
export async function lossMap(
  baseUrl: string,
  app: string,
  extra = '',
  headers: Record<string, string> = {},
): Promise<LossMapAnswer> {
  const to = Date.now() + 120_000;
  const res = await getJson(
    `${baseUrl}/v1/outcomes?app=${encodeURIComponent(app)}&from=${to - 3_600_000}&to=${to}${extra}`,
    headers,
  );
  if (res.status !== 200)
    throw new Error(`GET /v1/outcomes answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as LossMapAnswer;
}

/** Σ of every loss. */
export function totalLosses(m: LossMapAnswer): number {
  let n = 0;
  for (const stage of Object.values(m.losses)) for (const v of Object.values(stage)) n += v;
  return n;
}

/**
 * Waits until the loss map of `app` has settled (nothing pending) and the database holds what it
 * says is stored, then returns it. The identity is checked by the caller on the answer.
 */
export async function settledLossMap(
  baseUrl: string,
  app: string,
  at: StorageAt,
  timeoutMs = 15_000,
): Promise<LossMapAnswer> {
  let last: LossMapAnswer | null = null;
  try {
    return await waitFor(
      `the loss map of ${app} to settle`,
      async () => {
        const m = await lossMap(baseUrl, app);
        last = m;
        const settled = m.generated > 0 && m.pending.sdk === 0 && m.pending.pipeline === 0;
        return settled && m.stored === (await rowsOfApp(at, app)) ? m : null;
      },
      timeoutMs,
    );
  } catch (err) {
    throw new Error(
      `${(err as Error).message}; last answer ${JSON.stringify(last)}; rows ${await rowsOfApp(at, app)}`,
      { cause: err },
    );
  }
}
