/**
 * Whether a failed write was refused because of the rows themselves (so
 * retrying the same batch can never succeed) rather than the database being
 * unreachable, overloaded or mid-failover (retry).
 *
 * PostgreSQL: SQLSTATE class 22 (data exception), 23 (integrity
 * violation) and 54 (a program limit a row exceeds, such as an index entry
 * larger than a btree page holds). Schema errors (class 42) stay transient on
 * purpose: they hit every row, and dropping rows because of a bad deployment
 * would lose data. SQLite: constraint, type mismatch and too-big errors.
 */
export function isPermanentWriteError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return false;
  if (/^(22|23|54)[0-9A-Z]{3}$/.test(code)) return true;
  return code.startsWith('SQLITE_CONSTRAINT') || code === 'SQLITE_MISMATCH' || code === 'SQLITE_TOOBIG';
}
