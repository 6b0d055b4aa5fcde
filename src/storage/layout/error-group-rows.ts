import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { errorFingerprint, messageTemplate } from './error-fingerprint';
import type { ErrorMessageRow } from '../port';

/*
 * What the error-group fold writes: the errors of one (app, minute), aggregated per exact
 * (kind, message) by SQL, grouped here by fingerprint (the templating is JavaScript's regular
 * expressions, the same the read side uses: error-fingerprint.ts).
 */

/** Errors of one (app, minute) with one exact (kind, message). */
export interface MinuteMessageRow extends ErrorMessageRow {
  readonly minute: number;
}

/** One row of `error_groups_1m`: the errors of one (app, minute, fingerprint). */
export interface MinuteGroupRow {
  readonly app: string;
  readonly minute: number;
  readonly fingerprint: string;
  readonly kind: string | null;
  /** The newest occurrence's message. */
  message: string;
  count: number;
  firstTs: number;
  lastTs: number;
  lastId: string;
}

/** Rows templated between two turns of the event loop: a few milliseconds. */
const ROWS_PER_SLICE = 1000;

/** `rows` grouped per (app, minute, fingerprint), yielding to the event loop between slices. */
export async function minuteGroupsOf(rows: readonly MinuteMessageRow[]): Promise<MinuteGroupRow[]> {
  const groups = new Map<string, MinuteGroupRow>();
  for (let start = 0; start < rows.length; start += ROWS_PER_SLICE) {
    if (start > 0) await yieldToEventLoop();
    const end = Math.min(rows.length, start + ROWS_PER_SLICE);
    for (let i = start; i < end; i++) add(groups, rows[i] as MinuteMessageRow);
  }
  return [...groups.values()];
}

function add(groups: Map<string, MinuteGroupRow>, r: MinuteMessageRow): void {
  const fingerprint = errorFingerprint(r.kind, messageTemplate(r.message));
  const key = `${r.app}\u0000${r.minute}\u0000${fingerprint}`;
  const g = groups.get(key);
  if (g === undefined) {
    groups.set(key, { ...r, fingerprint });
    return;
  }
  g.count += r.count;
  g.firstTs = Math.min(g.firstTs, r.firstTs);
  if (r.lastTs > g.lastTs || (r.lastTs === g.lastTs && r.lastId > g.lastId)) {
    g.lastTs = r.lastTs;
    g.lastId = r.lastId;
    g.message = r.message;
  }
}
