import type { NameListQuery } from '../port';
import type { Param } from './sql-param';

/*
 * Pages of names (apps, metric names) found by skip scans: an index whose key leads with the name is
 * read one distinct name at a time (`min(name) WHERE name > previous`: one probe each), from the
 * page's cursor or prefix on, for at most `scanLimit` names per source. Names are in the database's
 * order (its collation; code point order under C, C.UTF-8 and SQLite), and a cursor is the last
 * name of a page, continued with `>`: a name is on exactly one page whatever the collation. A
 * prefix search reads the range [prefix, prefixEnd(prefix)) and keeps the names that start with
 * it: exact in code point order; under a language collation (en_US.UTF-8), which orders names by
 * their letters first, names that differ from the prefix in punctuation or case may lie outside
 * that range and are then not found.
 */

/** The first string after every string that starts with `prefix`, in code point order; null: none. */
export function prefixEnd(prefix: string): string | null {
  const points = [...prefix];
  while (points.length > 0) {
    const last = (points.pop() as string).codePointAt(0) as number;
    if (last < 0x10ffff) {
      // The next code point that is a character (surrogates are not).
      const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
      return points.join('') + String.fromCodePoint(next);
    }
  }
  return null;
}

/** ` AND …` conditions on `column` for the names a page may hold: after the cursor, in the prefix's range. */
export function nameRange(column: string, q: Pick<NameListQuery, 'after' | 'prefix'>, param: Param): string {
  let sql = '';
  if (q.after !== undefined) sql += ` AND ${column} > ${param(q.after)}`;
  if (q.prefix !== undefined) {
    sql += ` AND ${column} >= ${param(q.prefix)}`;
    const end = prefixEnd(q.prefix);
    if (end !== null) sql += ` AND ${column} < ${param(end)}`;
  }
  return sql;
}

/** ` AND …`: the upper end of the prefix's range only (a skip scan's later steps are past the rest). */
export function nameRangeEnd(column: string, q: Pick<NameListQuery, 'prefix'>, param: Param): string {
  const end = q.prefix === undefined ? null : prefixEnd(q.prefix);
  return end === null ? '' : ` AND ${column} < ${param(end)}`;
}

/** ` AND …`: `column` starts with the prefix (as the range says in code point order; exactly in any). */
export function startsWith(column: string, q: Pick<NameListQuery, 'prefix'>, param: Param): string {
  if (q.prefix === undefined) return '';
  const p = param(q.prefix);
  return ` AND substr(${column}, 1, length(${p})) = ${p}`;
}

/**
 * The recursive part of a skip scan: `cte(name, n)` visits the distinct `column` values of
 * `table` in order, from the page's start, at most `scanLimit` of them; `where(alias)` (` AND …`,
 * its columns prefixed with `alias`) restricts the rows (an app). A step past the last value gives
 * one NULL row, which ends it.
 */
export function skipScan(
  cte: string,
  table: string,
  column: string,
  where: (alias: string) => string,
  q: NameListQuery,
  param: Param,
): string {
  const scan = param(q.scanLimit);
  return `${cte}(name, n) AS (
      SELECT (SELECT min(t.${column}) FROM ${table} t WHERE t.${column} IS NOT NULL${where('t.')}${nameRange(`t.${column}`, q, param)}), 1
      UNION ALL
      SELECT (SELECT min(t.${column}) FROM ${table} t WHERE t.${column} > s.name${where('t.')}${nameRangeEnd(`t.${column}`, q, param)}), s.n + 1
        FROM ${cte} s WHERE s.name IS NOT NULL AND s.n < ${scan}
    )`;
}

/**
 * The page's horizon: the last name a skip scan visited when it stopped at `scanLimit` (names
 * after it were not looked at), the smallest over `ctes`; NULL when every scan reached its end.
 */
export function horizonSql(ctes: readonly string[], q: NameListQuery, param: Param): string {
  const scan = param(q.scanLimit);
  return `(SELECT min(h) FROM (${ctes
    .map((c) => `SELECT max(name) AS h FROM ${c} WHERE name IS NOT NULL HAVING count(*) >= ${scan}`)
    .join(' UNION ALL ')}) horizons)`;
}

/** A row of a page statement: a name of the page (`k` ≥ 1, in order), or the horizon row (`k` = 0). */
export interface PageRow {
  readonly k: number | string;
  readonly name: string | null;
}

/**
 * The end of a page statement: the page's rows in the database's order (`k` from 1), then one row
 * `k = 0` whose `name` is the horizon. `page` is a CTE of `name` and `k`; `columns` are further
 * columns of each page row (`p.name` is the page's name), NULL on the horizon row.
 */
export function pageRowsSql(horizon: string, columns: readonly string[]): string {
  const extra = columns.map((c) => `, ${c}`).join('');
  const nulls = columns.map((c) => `, NULL AS ${c.slice(c.lastIndexOf(' ') + 1)}`).join('');
  return `SELECT p.k, p.name${extra} FROM page p
    UNION ALL SELECT 0, ${horizon}${nulls}
    ORDER BY 1`;
}

/**
 * The page and its cursor from a page statement's rows (at most `limit + 1` names and the horizon
 * row): more than `limit` names means more follow; a horizon means the scan stopped there and the
 * next page starts after it (this one may hold fewer than `limit` names, or none).
 */
export function pageOf<T extends PageRow>(
  rows: readonly T[],
  limit: number,
): { rows: T[]; next: string | null } {
  const horizon = rows.find((r) => Number(r.k) === 0)?.name ?? null;
  const names = rows.filter((r) => Number(r.k) > 0);
  if (names.length > limit) {
    const page = names.slice(0, limit);
    return { rows: page, next: (page[page.length - 1] as T).name };
  }
  return { rows: names, next: horizon };
}
