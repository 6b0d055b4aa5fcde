import { latin1Text } from '../../events/scan/byte-range';
import { LineTimestamp } from './copy-line-ts';
import type { MetricBlockKey } from './metric-blocks-copy';

/*
 * What a write records beside its rows, in the same transaction: the rollup invalidation log's
 * (app, name, minute) of every metric sample (migration 003), the error-group invalidation log's
 * (app, minute) of every error (migration 011) and the loss map's stored count per
 * (app, minute, type) (migration 005). The samples' come from their blocks (one per (app, name,
 * minute): metric-blocks-copy.ts), their app and name escaped for COPY text; the events' are read
 * off the events' own COPY lines, whose first fields are `id ts type app …`, and written back as
 * the same escaped bytes: nothing is decoded, and text that groups together is the same text
 * (COPY's escaping is one-to-one, so an app's samples and events count under the same bytes).
 * copy-encoding.ts and copy-line-from-scan.ts write the lines.
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
 * Events of one minute whose third and fourth fields (type and app) are the same bytes: the first
 * such line holds them, at `start` to `end`. Groups of one hash are chained through `next`.
 */
interface Group {
  readonly minute: number;
  readonly line: Buffer;
  readonly start: number;
  readonly end: number;
  /** Index of the tab between the two fields. */
  readonly middle: number;
  rows: number;
  next: Group | null;
}

function sameKey(g: Group, minute: number, line: Buffer, start: number, end: number): boolean {
  if (g.minute !== minute || g.end - g.start !== end - start) return false;
  for (let k = 0; k < end - start; k++) if (g.line[g.start + k] !== line[start + k]) return false;
  return true;
}

/** Groups a batch's event lines by (minute, type, app), without making a string per line. */
class LineGroups {
  private readonly byHash = new Map<number, Group>();
  private readonly timestamp = new LineTimestamp();
  readonly all: Group[] = [];

  add(line: Buffer): void {
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
      if (sameKey(g, minute, line, start, end)) {
        g.rows++;
        return;
      }
    }
    const group: Group = { minute, line, start, end, middle, rows: 1, next: first ?? null };
    this.byHash.set(hash, group);
    this.all.push(group);
  }
}

/** COPY text's escapes of `\\`, newline, CR and tab, the only bytes it must escape. */
const COPY_SPECIAL = /[\\\n\r\t]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function copyEscaped(latin1: string): string {
  return latin1.replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c] as string);
}

/**
 * The records of a batch's event lines and sample blocks (all of them are inserted: the COPY path,
 * whose transaction fails as a whole on a duplicate).
 */
export function storedRecords(
  eventLines: readonly Buffer[],
  blocks: readonly MetricBlockKey[],
  countStored: boolean,
): StoredRecords {
  let log = '';
  let errorLog = '';
  const counts = new Map<string, number>();
  const count = (key: string, rows: number): void => {
    counts.set(key, (counts.get(key) ?? 0) + rows);
  };
  for (const b of blocks) {
    // Latin-1 text: one character per byte, so the bytes are written back unchanged.
    const app = copyEscaped(b.app);
    log += `${app}\t${copyEscaped(b.name)}\t${b.minute}\n`;
    if (countStored) count(`${app}\tmetric\t${b.minute}`, b.samples);
  }
  const groups = new LineGroups();
  for (const line of eventLines) groups.add(line);
  for (const g of groups.all) {
    const type = latin1Text(g.line, g.start, g.middle);
    const app = latin1Text(g.line, g.middle + 1, g.end);
    if (type === 'error') errorLog += `${app}\t${g.minute}\n`;
    if (countStored) count(`${app}\t${type}\t${g.minute}`, g.rows);
  }
  let stored = '';
  for (const [key, rows] of counts) stored += `${key}\tstored\t\t\t${rows}\n`;
  return {
    invalidations: Buffer.from(log, 'latin1'),
    errorMinutes: Buffer.from(errorLog, 'latin1'),
    storedCounts: Buffer.from(stored, 'latin1'),
  };
}
