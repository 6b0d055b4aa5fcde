/** `sluice query`: one read API route from the command line, as a table or as JSON. */
import { QUERY_ROUTES, type QueryArgs } from './query-args';
import { readApi } from './read-target';

/** Most pages `--all` follows: a guard against a cursor that never ends, not a limit users meet. */
const MAX_PAGES = 10_000;

export async function runQuery(a: QueryArgs, write: (text: string) => void): Promise<void> {
  const { path, rows: field } = QUERY_ROUTES[a.route];
  const params = new URLSearchParams(a.params);
  let answer = await readApi(a.target, path, params);
  const rows = [...((answer[field] as Record<string, unknown>[] | undefined) ?? [])];
  for (let pages = 1; a.all && typeof answer.next_cursor === 'string' && pages < MAX_PAGES; pages++) {
    params.set('cursor', answer.next_cursor);
    answer = await readApi(a.target, path, params);
    rows.push(...((answer[field] as Record<string, unknown>[] | undefined) ?? []));
  }
  if (a.json) {
    write(JSON.stringify(a.all ? { [field]: rows } : answer, null, 2));
    return;
  }
  write(table(rows));
  if (!a.all && typeof answer.next_cursor === 'string') {
    write(`(more: --cursor ${answer.next_cursor}, or --all)`);
  }
}

/** Rows as aligned columns: every key of any row, objects shown as JSON, times as ISO 8601. */
export function table(rows: readonly Record<string, unknown>[]): string {
  if (rows.length === 0) return '(none)';
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (key: string, v: unknown): string => {
    if (v === undefined || v === null) return '';
    if (typeof v === 'number' && /(^ts$|_seen$|_ts$|minute$)/.test(key) && v > 1e11)
      return new Date(v).toISOString();
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  };
  const cells = rows.map((r) => columns.map((c) => cell(c, r[c]).replace(/\s+/g, ' ')));
  const widths = columns.map((c, i) =>
    Math.min(60, Math.max(c.length, ...cells.map((row) => row[i]?.length ?? 0))),
  );
  const line = (values: readonly string[]): string =>
    values
      .map((v, i) => {
        const w = widths[i] ?? 0;
        return v.length > w ? `${v.slice(0, w - 1)}…` : v.padEnd(w);
      })
      .join('  ')
      .trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}
