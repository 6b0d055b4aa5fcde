import type { ErrorScan, ErrorScanQuery } from '../port';
import {
  errorBoundSql,
  errorGroupsSql,
  toErrorMessageRow,
  type ErrorGroupsSqlRow,
  type ErrorScanDialect,
} from '../layout/error-scan-sql';
import { positionalParams } from './positional-params';
import type { ReadQuery } from './read-pool';

const DIALECT: ErrorScanDialect = {
  uuid: (placeholder) => `${placeholder}::uuid`,
  newestId: '(array_agg(id::text ORDER BY ts DESC, id DESC))[1]',
};

/** The newest `scanLimit` error events of the window, aggregated (see layout/error-scan-sql.ts). */
export async function scanErrors(read: ReadQuery, q: ErrorScanQuery): Promise<ErrorScan> {
  const b = positionalParams();
  const { rows: bounds } = await read<{ ts: string; id: string }>(errorBoundSql(q, b.param), b.values);
  const bound = bounds[0] === undefined ? null : { ts: Number(bounds[0].ts), id: bounds[0].id };
  const g = positionalParams();
  const { rows } = await read<ErrorGroupsSqlRow>(errorGroupsSql(q, bound, g.param, DIALECT), g.values);
  return { rows: rows.map(toErrorMessageRow), boundTs: bound?.ts ?? null };
}
