import { lossMapOf } from '../../loss-map/loss-map';
import type { OutcomeCount, OutcomeRow } from '../../loss-map/outcome';
import type { AppDataDeletion } from '../port';
import { floorTo, ROLLUP_WIDTH_MS } from './rollups';

/*
 * The loss map's part of `Storage.deleteAppData` (docs/ARCHITECTURE.md, "The loss map"): the counts
 * go with the data they describe, except what was still on its way when the deletion's snapshot
 * was claimed. An app that sends while it is deleted has counts in flight: accepted counts a
 * collector holds in memory for a second (of events already stored, and deleted, or still in a
 * lane, and stored after), client reports sent later, rows committed after the snapshot with their
 * stored counts. Removing every count of the snapshot would leave those to add up to a `pending`
 * that never returns to 0. So for each (minute, type) the deletion keeps one count per side of
 * what the removed ones left pending, by the loss map's own arithmetic (`lossMapOf`): what the
 * counts in flight then add brings it to 0 once they are all in, and `stored` ends equal to the
 * rows left.
 */

/** The rows of the loss map a deletion removes: `WHERE` condition and parameters, placeholders the dialect's. */
export interface OutcomeDeletion {
  /** `SELECT minute, type, outcome, reason, origin, sum(count) AS count …`: the removed counts, summed. */
  readonly sumsSql: string;
  readonly deleteSql: string;
  readonly params: readonly (string | number)[];
}

/** The loss-map rows `d` removes, or null when it removes none (one event: it was stored, and stays counted so). */
export function outcomeDeletion(d: AppDataDeletion, param: (n: number) => string): OutcomeDeletion | null {
  if (d.scope === 'id') return null;
  // `before`: the minutes wholly before it; the minute holding it keeps its counts.
  const where = d.scope === 'all' ? `app = ${param(1)}` : `app = ${param(1)} AND minute < ${param(2)}`;
  const params = d.scope === 'all' ? [d.app] : [d.app, floorTo(d.before, ROLLUP_WIDTH_MS['1m'])];
  return {
    sumsSql: `SELECT minute, type, outcome, reason, origin, sum(count) AS count FROM event_outcomes
      WHERE ${where} GROUP BY minute, type, outcome, reason, origin`,
    deleteSql: `DELETE FROM event_outcomes WHERE ${where}`,
    params,
  };
}

/**
 * What the deletion keeps of `app`'s removed counts `rows`: per (minute, type), what they left
 * pending in the SDKs (as `captured`, origin `sdk`) and in the pipeline (as `accepted`, origin
 * `direct`), either of which may be negative (counts in flight that will cancel it). Nothing when
 * nothing was pending.
 */
export function pendingCarriedOver(app: string, rows: readonly OutcomeRow[]): OutcomeCount[] {
  const groups = new Map<string, OutcomeRow[]>();
  for (const r of rows) {
    const key = `${r.minute}\u0000${r.type}`;
    (groups.get(key) ?? groups.set(key, []).get(key))?.push(r);
  }
  const out: OutcomeCount[] = [];
  for (const group of groups.values()) {
    const { minute, type } = group[0] as OutcomeRow;
    const { pending } = lossMapOf(group);
    const base = { app, minute, type, reason: '' };
    if (pending.sdk !== 0) out.push({ ...base, outcome: 'captured', origin: 'sdk', count: pending.sdk });
    if (pending.pipeline !== 0)
      out.push({ ...base, outcome: 'accepted', origin: 'direct', count: pending.pipeline });
  }
  return out;
}
