import type { ErrorScanDialect } from '../layout/error-scan-sql';

/** `scanErrors` in PostgreSQL's terms (layout/error-scan-sql.ts builds the SQL). */
export const PG_ERROR_SCAN_DIALECT: ErrorScanDialect = {
  uuid: (placeholder) => `${placeholder}::uuid`,
  newestId: '(array_agg(id::text ORDER BY ts DESC, id DESC))[1]',
};
