import { latin1Text } from '../../events/scan/byte-range';
import type { CopyLine } from './copy-encoding';
import { LineTimestamp } from './copy-line-ts';

/*
 * What a write records beside its rows, in the same transaction: the rollup invalidation log's
 * (app, name, minute) of every metric sample (migration 003), the error-group invalidation log's
 * (app, minute) of every error (migration 011) and the loss map's stored count per
 * (app, minute, type) (migration 005). Read off the rows' own COPY lines, whose first fields are
 * `id ts app name …` (metric_samples) and `id ts type app …` (events), and written back as COPY
 * lines of the same escaped bytes: nothing is decoded, and text that groups together is the same
 * text (COPY's escaping is one-to-one). The lines carry the row's columns in `METRIC_SAMPLES` and
 * `EVENTS` order (layout/columns.ts); copy-encoding.ts and copy-line-from-scan.ts write them.
 */

const TAB = 0x09;
const MINUTE_MS = 60_000;

/** `COPY` of the invalidation log: the columns of `StoredRecords.invalidations`' lines. */
export const INVALIDATIONS_COPY = 'COPY metric_rollup_invalidations (app, name, bucket) FROM STDIN';
/** `COPY` of the error-group invalidation log: the columns of `StoredRecords.errorMinutes`' lines. */
export const ERROR_MINUTES_COPY = 'COPY error_group_invalidations (app, minute) FROM STDIN';
/** `COPY` of the loss map: the columns of `StoredRecords.storedCounts`' lines. */
export const STORED_COUNTS_COPY =
  'COPY event_outcomes (app, type, minute, outcome, reason, origin, count) FROM STDIN';

/** A batch's records as COPY payloads (empty when the batch has no row of their kind). */
export interface StoredRecords {
  /** `app\tname\tminute` per distinct (app, name, minute) of the metric samples. */
  readonly invalidations: Buffer;
  /** `app\tminute` per distinct (app, minute) of the error events (migration 011). */
  readonly errorMinutes: Buffer;
  /** `app\ttype\tminute\tstored\t\t\tcount` per (app, type, minute) of all rows; empty when not counted. */
  readonly storedCounts: Buffer;
}

/**
 * Rows of one minute whose third and fourth fields are the same bytes (app and name of a sample,
 * type and app of an event): the first such line holds them, at `start` to `end`. Groups of one
 * hash are chained through `next`.
 */
interface Group {
  readonly metric: boolean;
  readonly minute: number;
  readonly line: Buffer;
  readonly start: number;
  readonly end: number;
  /** Index of the tab between the two fields. */
  readonly middle: number;
  rows: number;
  next: Group | null;
}

function sameKey(
  g: Group,
  metric: boolean,
  minute: number,
  line: Buffer,
  start: number,
  end: number,
): boolean {
  if (g.metric !== metric || g.minute !== minute || g.end - g.start !== end - start) return false;
  for (let k = 0; k < end - start; k++) if (g.line[g.start + k] !== line[start + k]) return false;
  return true;
}

/** Groups a batch's lines by (kind, minute, the two fields), without making a string per line. */
class LineGroups {
  private readonly byHash = new Map<number, Group>();
  private readonly timestamp = new LineTimestamp();
  readonly all: Group[] = [];

  add(metric: boolean, line: Buffer): void {
    // Fields: id, ts, then the two grouped ones.
    const { ts, end: tsEnd } = this.timestamp.read(line);
    // The same truncation as SQL's `ts - ts % 60000`, which the readers of both tables use.
    const minute = ts - (ts % MINUTE_MS);
    const start = tsEnd + 1;
    let middle = -1;
    let hash = (minute / MINUTE_MS) | 0;
    let k = start;
    for (; ; k++) {
      const c = line[k];
      if (c === undefined) throw new Error('a COPY line of fewer fields than its table has');
      if (c === TAB) {
        if (middle >= 0) break;
        middle = k;
      }
      hash = Math.imul(hash ^ c, 0x01000193);
    }
    const end = k;
    const first = this.byHash.get(hash);
    for (let g = first ?? null; g !== null; g = g.next) {
      if (sameKey(g, metric, minute, line, start, end)) {
        g.rows++;
        return;
      }
    }
    const group: Group = { metric, minute, line, start, end, middle, rows: 1, next: first ?? null };
    this.byHash.set(hash, group);
    this.all.push(group);
  }
}

/**
 * The records of `lines` (all of them are inserted: the COPY path, whose transaction fails as a
 * whole on a duplicate).
 */
export function storedRecords(lines: readonly CopyLine[], countStored: boolean): StoredRecords {
  const groups = new LineGroups();
  for (const { metric, bytes } of lines) groups.add(metric, bytes);
  let log = '';
  let errorLog = '';
  const counts = new Map<string, number>();
  for (const g of groups.all) {
    // Latin-1 text: one character per byte, so the bytes are written back unchanged.
    const first = latin1Text(g.line, g.start, g.middle);
    const second = latin1Text(g.line, g.middle + 1, g.end);
    if (g.metric) log += `${first}\t${second}\t${g.minute}\n`;
    else if (first === 'error') errorLog += `${second}\t${g.minute}\n`;
    if (!countStored) continue;
    // A sample's fields are app, name; an event's type, app.
    const key = g.metric ? `${first}\tmetric\t${g.minute}` : `${second}\t${first}\t${g.minute}`;
    counts.set(key, (counts.get(key) ?? 0) + g.rows);
  }
  let stored = '';
  for (const [key, rows] of counts) stored += `${key}\tstored\t\t\t${rows}\n`;
  return {
    invalidations: Buffer.from(log, 'latin1'),
    errorMinutes: Buffer.from(errorLog, 'latin1'),
    storedCounts: Buffer.from(stored, 'latin1'),
  };
}
