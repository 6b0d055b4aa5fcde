import type { OutcomeCount, OutcomeName, OutcomeOrigin } from './outcome';

interface Entry {
  app: string;
  minute: number;
  type: string;
  outcome: OutcomeName;
  reason: string;
  origin: OutcomeOrigin;
  count: number;
}

/**
 * Counts of the loss map not yet written, summed per key in memory. Bounded: past `maxKeys`
 * distinct keys a count is refused (`add` returns false) and the caller counts it as lost.
 *
 * Keyed by app, then minute, then a short list scanned for the rest of the key (type, outcome,
 * reason, origin: a handful per app and minute, bounded by the vocabulary): comparing those field
 * by field costs less than building and hashing a composite key string on every count.
 */
export class OutcomeTally {
  private byApp = new Map<string, Map<number, Entry[]>>();
  private keys = 0;

  constructor(private readonly maxKeys: number) {}

  get size(): number {
    return this.keys;
  }

  add(c: OutcomeCount): boolean {
    if (c.count <= 0) return true;
    let byMinute = this.byApp.get(c.app);
    let entries = byMinute?.get(c.minute);
    if (entries !== undefined) {
      for (const e of entries) {
        if (
          e.minute === c.minute &&
          e.type === c.type &&
          e.outcome === c.outcome &&
          e.reason === c.reason &&
          e.origin === c.origin
        ) {
          e.count += c.count;
          return true;
        }
      }
    }
    if (this.keys >= this.maxKeys) return false;
    if (byMinute === undefined) {
      byMinute = new Map();
      this.byApp.set(c.app, byMinute);
    }
    if (entries === undefined) {
      entries = [];
      byMinute.set(c.minute, entries);
    }
    entries.push({ ...c });
    this.keys++;
    return true;
  }

  /** Everything counted so far; the tally starts empty again. */
  drain(): OutcomeCount[] {
    const drained: OutcomeCount[] = [];
    for (const byMinute of this.byApp.values())
      for (const entries of byMinute.values()) drained.push(...entries);
    this.byApp = new Map();
    this.keys = 0;
    return drained;
  }
}
