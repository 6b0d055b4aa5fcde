import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const SPECIAL = /[\\\n\r\t]/;
const SPECIALS = /[\\\n\r\t]/g;

/** One field in COPY text format: `\N` for NULL; backslash, newline, CR and tab escaped. */
export function copyField(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (typeof v === 'number') return String(v);
  const s = String(v);
  return SPECIAL.test(s) ? s.replace(SPECIALS, (c) => ESCAPES[c] as string) : s;
}

/** Rows (values in column order) as a COPY text payload. */
export function copyText(rows: readonly (readonly unknown[])[]): string {
  let out = '';
  for (const row of rows) out += `${row.map(copyField).join('\t')}\n`;
  return out;
}

/** Streams one payload (text, or buffers written in turn) through `COPY … FROM STDIN` on `client`. */
export function copyIn(
  client: pg.ClientBase,
  sql: string,
  payload: string | readonly Buffer[],
): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(sql));
    stream.on('error', reject);
    stream.on('finish', () => resolve());
    if (typeof payload === 'string') {
      stream.end(payload, 'utf8');
      return;
    }
    for (const chunk of payload) stream.write(chunk);
    stream.end();
  });
}
