import type pg from 'pg';

/**
 * Hands a read's rows to `onPage` at most `pageRows` at a time, or rejects; the result holds no
 * rows. The next page is asked of the server only once the previous page's promise resolved: a
 * slow consumer holds the read, never a backlog of rows.
 */
export type ReadPages = <Row extends pg.QueryResultRow>(
  text: string,
  values: unknown[],
  pageRows: number,
  onPage: (rows: Row[]) => Promise<void> | void,
) => Promise<void>;

/** The cursor's name: one cursor per transaction, so one name serves every read. */
const CURSOR = 'sluice_read';

/**
 * The failure of the consumer of a page (`onPage` threw): passed through as it is, never taken
 * for the database's (read-pool.ts maps the database's failures to busy or unavailable).
 */
export class PageConsumerError extends Error {
  constructor(readonly error: unknown) {
    super('a read page consumer failed', { cause: error });
  }
}

/** The read went past its deadline between two pages (read-pool.ts answers it as a timeout). */
export class ReadDeadlineError extends Error {
  constructor() {
    super('the read ran past its deadline');
  }
}

/**
 * `ReadPages` on one checked-out connection: `DECLARE … CURSOR` in a read-only transaction, then
 * `FETCH pageRows` until a short page. Each page is parsed by the driver from one or two socket
 * reads (docs/ARCHITECTURE.md, "Bounded reads"): a result of 20,000 rows is parsed in 40 short
 * steps with turns of the event loop between them, not in one poll of the socket, and only one
 * page is live in the process at a time. The transaction sets `cursor_tuple_fraction = 1`, so the
 * planner plans for the whole result (as for a plain query) rather than for its first rows.
 *
 * The whole read, every page, is bounded by `deadlineMs` (`performance.now()` time): each `FETCH`
 * runs with `statement_timeout` set to what is left of it (PostgreSQL cancels it then, SQLSTATE
 * 57014), and a read past it between pages fails with `ReadDeadlineError`. The caller ends the
 * transaction: `COMMIT` here after the last page; on any failure the caller destroys the connection
 * (which rolls it back).
 */
export async function fetchInPages<Row extends pg.QueryResultRow>(
  client: pg.ClientBase,
  text: string,
  values: unknown[],
  pageRows: number,
  deadlineMs: number,
  onPage: (rows: Row[]) => Promise<void> | void,
): Promise<void> {
  await client.query('BEGIN READ ONLY; SET LOCAL cursor_tuple_fraction = 1');
  await client.query(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${text}`, values);
  for (;;) {
    const leftMs = Math.ceil(deadlineMs - performance.now());
    if (leftMs <= 0) throw new ReadDeadlineError();
    const results = (await client.query(
      `SET LOCAL statement_timeout = ${leftMs}; FETCH ${Math.floor(pageRows)} FROM ${CURSOR}`,
    )) as unknown as Array<pg.QueryResult<Row>>;
    const rows = results[results.length - 1]?.rows ?? [];
    if (rows.length > 0) {
      try {
        await onPage(rows);
      } catch (err) {
        throw new PageConsumerError(err);
      }
    }
    if (rows.length < pageRows) break;
  }
  await client.query('COMMIT');
}
