import type Database from 'better-sqlite3';
import type { ErrorScan, ErrorScanQuery } from '../port';
import {
  errorBoundSql,
  errorGroupsSql,
  toErrorMessageRow,
  type ErrorGroupsSqlRow,
  type ErrorScanDialect,
} from '../layout/error-scan-sql';
import { namedParams } from './named-params';

type Prepare = (sql: string) => Database.Statement;

/** Ids are lower-case UUID text of one length: the largest `ts || id` string is the newest row. */
const DIALECT: ErrorScanDialect = {
  uuid: (placeholder) => placeholder,
  newestId: "substr(max(printf('%016d', ts) || id), 17)",
};

/** The newest `scanLimit` error events of the window, aggregated (see layout/error-scan-sql.ts). */
export function scanErrors(prepare: Prepare, q: ErrorScanQuery): ErrorScan {
  const b = namedParams();
  const found = prepare(errorBoundSql(q, b.param)).get(b.params) as { ts: number; id: string } | undefined;
  const bound = found === undefined ? null : { ts: found.ts, id: found.id };
  const g = namedParams();
  const rows = prepare(errorGroupsSql(q, bound, g.param, DIALECT)).all(g.params) as ErrorGroupsSqlRow[];
  return { rows: rows.map(toErrorMessageRow), boundTs: bound?.ts ?? null };
}
