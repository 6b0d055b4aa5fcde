import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One field in COPY text format: `\N` for NULL; backslash, newline, CR and tab escaped. */
function field(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'number') return String(v);
  return String(v).replace(/[\\\n\r\t]/g, (c) => ESCAPES[c] as string);
}

/** Rows (values in column order) as a COPY text payload. */
export function copyText(rows: readonly (readonly unknown[])[]): string {
  let out = '';
  for (const row of rows) out += `${row.map(field).join('\t')}\n`;
  return out;
}

/** Streams one payload through `COPY … FROM STDIN` on `client`. */
export function copyIn(client: pg.ClientBase, sql: string, payload: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(sql));
    stream.on('error', reject);
    stream.on('finish', () => resolve());
    stream.end(payload, 'utf8');
  });
}
