import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { columnList, type TableColumns } from './columns';
import type { RowWriter } from './row-writer';

/** Connections that already have their staging tables (temporary tables live as long as the session). */
const staged = new WeakMap<pg.PoolClient, Set<string>>();

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One field in COPY text format: `\N` for NULL; backslash, newline, CR and tab escaped. */
function copyField(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'number') return String(v);
  return String(v).replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c] as string);
}

async function ensureStagingTable<Row>(
  client: pg.PoolClient,
  t: TableColumns<Row>,
  stage: string,
): Promise<void> {
  let tables = staged.get(client);
  if (tables?.has(stage)) return;
  // ON COMMIT DELETE ROWS empties it at every commit. If the transaction that creates it fails, the
  // connection is destroyed (see withClient), so the memo never outlives the table.
  await client.query(`CREATE TEMP TABLE ${stage} (LIKE ${t.table}) ON COMMIT DELETE ROWS`);
  if (tables === undefined) {
    tables = new Set();
    staged.set(client, tables);
  }
  tables.add(stage);
}

function copyInto(client: pg.PoolClient, sql: string, payload: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // pg's query_timeout also covers this stream: on expiry it errors the stream.
    const stream = client.query(copyFrom(sql));
    stream.on('error', reject);
    stream.on('finish', () => resolve());
    stream.end(payload, 'utf8');
  });
}

/** `COPY` into a temporary staging table, then one `INSERT … SELECT … ON CONFLICT DO NOTHING`. */
export const writeCopy: RowWriter = async <Row>(
  client: pg.PoolClient,
  t: TableColumns<Row>,
  rows: readonly Row[],
): Promise<number> => {
  const stage = `sluice_stage_${t.table}`;
  await ensureStagingTable(client, t, stage);
  const columns = columnList(t);
  let payload = '';
  for (const row of rows) payload += `${t.columns.map((c) => copyField(row[c.name])).join('\t')}\n`;
  await copyInto(client, `COPY ${stage} (${columns}) FROM STDIN`, payload);
  const result = await client.query(
    `INSERT INTO ${t.table} (${columns}) SELECT ${columns} FROM ${stage} ON CONFLICT DO NOTHING`,
  );
  return result.rowCount ?? 0;
};
