import type { Param } from './sql-param';

/**
 * How an adapter runs one read statement built once for both (layout/*-sql.ts): `build` gets the
 * adapter's placeholder function and returns the SQL; the rows come back as the driver gives them
 * (PostgreSQL: bigints and counts as strings).
 */
export interface ReadRunner {
  rows<Row>(build: (param: Param) => string): Promise<Row[]>;
}
