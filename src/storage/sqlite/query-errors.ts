import type { ErrorScanDialect } from '../layout/error-scan-sql';

/**
 * `scanErrors` in SQLite's terms (layout/error-scan-sql.ts builds the SQL). Ids are lower-case
 * UUID text of one length: the largest `ts || id` string is the newest row.
 */
export const SQLITE_ERROR_SCAN_DIALECT: ErrorScanDialect = {
  uuid: (placeholder) => placeholder,
  newestId: "substr(max(printf('%016d', ts) || id), 17)",
};
