/** Latest instant a JavaScript Date holds (milliseconds since the Unix epoch). */
export const MAX_TIMESTAMP_MS = 8.64e15;

const MILLIS = /^\d{1,16}$/;
/** `YYYY-MM-DD`, optionally `THH:MM[:SS[.fraction]]` with `Z` or `±HH:MM` (a time needs a zone). */
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-](\d{2}):(\d{2})))?$/;

/**
 * Milliseconds since the Unix epoch from a read API time parameter: an integer of milliseconds,
 * an ISO 8601 date (UTC midnight), or an ISO 8601 date-time with a zone (`Z` or `±HH:MM`; digits
 * past milliseconds are dropped). Null for anything else, a date that does not exist (2026-02-30)
 * or an instant outside 0..MAX_TIMESTAMP_MS. A time without a zone is refused: it would be read in
 * the server's zone.
 */
export function parseTimestamp(text: string): number | null {
  if (MILLIS.test(text)) {
    const ms = Number(text);
    return ms <= MAX_TIMESTAMP_MS ? ms : null;
  }
  const m = ISO.exec(text);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((p) =>
    p === undefined ? 0 : Number(p),
  ) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(0);
  // setUTCFullYear takes years 0–99 as they are (Date.UTC would add 1900) and rolls 2026-02-30
  // over into March: a date that does not exist is refused below.
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return null;
  }
  const millis = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  let offsetMinutes = 0;
  if (m[8] !== undefined && m[8] !== 'Z') {
    const offsetHours = Number(m[9]);
    const offsetMins = Number(m[10]);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (m[8].startsWith('-') ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const ms = date.getTime() + ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1000 + millis;
  return ms >= 0 && ms <= MAX_TIMESTAMP_MS ? ms : null;
}
