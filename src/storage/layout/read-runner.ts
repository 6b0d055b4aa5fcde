import type { Param } from './sql-param';

/**
 * Rows a paged read hands on at a time (`ReadRunner.pages`): on PostgreSQL one `FETCH`, which the
 * driver parses in about a millisecond (a few µs a row) before the event loop turns again.
 */
export const READ_PAGE_ROWS = 500;

/** Takes one page of a paged read; the next page is read once its promise resolves. */
export type PageSink<Row> = (rows: Row[]) => Promise<void> | void;

/**
 * How an adapter runs one read statement built once for both (layout/*-sql.ts): `build` gets the
 * adapter's placeholder function and returns the SQL; the rows come back as the driver gives them
 * (PostgreSQL: bigints and counts as strings).
 */
export interface ReadRunner {
  rows<Row>(build: (param: Param) => string): Promise<Row[]>;
  /**
   * The same rows, in order, handed to `onPage` at most `pageRows` at a time: a read whose result
   * may be large keeps one page in memory, not all of it (PostgreSQL: a cursor, read-cursor.ts).
   * A runner without it (SQLite, which reads on the collector's thread either way) reads whole
   * (`readInPages`).
   */
  pages?<Row>(build: (param: Param) => string, pageRows: number, onPage: PageSink<Row>): Promise<void>;
}

/** `run.pages(…)`, or, on a runner without it, `run.rows(…)` handed on in pages of `pageRows`. */
export async function readInPages<Row>(
  run: ReadRunner,
  build: (param: Param) => string,
  pageRows: number,
  onPage: PageSink<Row>,
): Promise<void> {
  if (run.pages !== undefined) return run.pages(build, pageRows, onPage);
  await handInPages(await run.rows<Row>(build), pageRows, onPage);
}

/** Rows read whole, handed to `onPage` `pageRows` at a time, each once the previous page's promise resolved. */
export async function handInPages<Row>(rows: Row[], pageRows: number, onPage: PageSink<Row>): Promise<void> {
  for (let i = 0; i < rows.length; i += pageRows) await onPage(rows.slice(i, i + pageRows));
}
