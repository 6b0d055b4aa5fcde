import type { ErrorMessageRow } from '../storage/port';
import { errorFingerprint, messageTemplate } from '../storage/layout/error-fingerprint';
import { NEXT_LOOP_TURN, type NextSlice } from './read-slices';

/** Errors of one kind whose messages share a template, over the apps and time scanned. */
export interface ErrorGroup {
  readonly fingerprint: string;
  readonly kind: string | null;
  /** The message with its varying parts replaced (see error-fingerprint.ts). */
  readonly template: string;
  /** The newest occurrence's message as it was sent. */
  readonly message: string;
  readonly count: number;
  readonly firstSeen: number;
  readonly lastSeen: number;
  /** The newest occurrence: read it with `GET /v1/events?type=error&from=<ts>&to=<ts+1>`. */
  readonly lastId: string;
  readonly apps: string[];
}

interface Accumulator {
  readonly fingerprint: string;
  readonly kind: string | null;
  readonly template: string;
  message: string;
  count: number;
  firstSeen: number;
  lastSeen: number;
  lastId: string;
  readonly apps: Set<string>;
}

/** Rows grouped in one slice: about a millisecond of templating (some 5 µs a row). */
const ROWS_PER_SLICE = 200;

/** Groups rows by (kind, template): most recent group first, then larger, then by fingerprint. */
export function groupErrors(rows: readonly ErrorMessageRow[]): ErrorGroup[] {
  const groups = new Map<string, Accumulator>();
  for (const r of rows) addRow(groups, r);
  return ordered(groups);
}

/**
 * `groupErrors` in slices of `rowsPerSlice` rows, each after `nextSlice()` (the read turns; by
 * default the next turn of the event loop): templating the newest 20,000 errors takes over
 * 100 ms, which ingest must not wait for.
 */
export async function groupErrorsYielding(
  rows: readonly ErrorMessageRow[],
  rowsPerSlice = ROWS_PER_SLICE,
  nextSlice: NextSlice = NEXT_LOOP_TURN,
): Promise<ErrorGroup[]> {
  const grouper = new ErrorGrouper(nextSlice, rowsPerSlice);
  await grouper.add(rows);
  return grouper.groups();
}

/**
 * `groupErrors` fed a page of rows at a time, as a paged read hands them on (`Storage.scanErrors`
 * with `onRows`): only the groups stay, never the rows. Each page is grouped in slices of
 * `rowsPerSlice` rows, each but a first page's first after `nextSlice()`.
 */
export class ErrorGrouper {
  private readonly accumulators = new Map<string, Accumulator>();
  private started = false;

  constructor(
    private readonly nextSlice: NextSlice = NEXT_LOOP_TURN,
    private readonly rowsPerSlice = ROWS_PER_SLICE,
  ) {}

  /** Adds `rows` to the groups; rows may come in any order. */
  readonly add = async (rows: readonly ErrorMessageRow[]): Promise<void> => {
    for (let start = 0; start < rows.length; start += this.rowsPerSlice) {
      if (this.started) await this.nextSlice();
      this.started = true;
      const end = Math.min(rows.length, start + this.rowsPerSlice);
      for (let i = start; i < end; i++) addRow(this.accumulators, rows[i] as ErrorMessageRow);
    }
  };

  /** The groups of every row added: most recent group first, then larger, then by fingerprint. */
  groups(): ErrorGroup[] {
    return ordered(this.accumulators);
  }
}

function addRow(groups: Map<string, Accumulator>, r: ErrorMessageRow): void {
  const template = messageTemplate(r.message);
  const key = `${r.kind ?? ''}\u0000${template}`;
  const g = groups.get(key);
  if (g === undefined) {
    groups.set(key, {
      fingerprint: errorFingerprint(r.kind, template),
      kind: r.kind,
      template,
      message: r.message,
      count: r.count,
      firstSeen: r.firstTs,
      lastSeen: r.lastTs,
      lastId: r.lastId,
      apps: new Set([r.app]),
    });
    return;
  }
  g.count += r.count;
  g.firstSeen = Math.min(g.firstSeen, r.firstTs);
  if (r.lastTs > g.lastSeen || (r.lastTs === g.lastSeen && r.lastId > g.lastId)) {
    g.lastSeen = r.lastTs;
    g.lastId = r.lastId;
    g.message = r.message;
  }
  g.apps.add(r.app);
}

function ordered(groups: ReadonlyMap<string, Accumulator>): ErrorGroup[] {
  return [...groups.values()]
    .map((g) => ({ ...g, apps: [...g.apps].sort() }))
    .sort(
      (a, b) =>
        b.lastSeen - a.lastSeen ||
        b.count - a.count ||
        (a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0),
    );
}
