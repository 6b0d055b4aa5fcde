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
 */
export class OutcomeTally {
  private entries = new Map<string, Entry>();

  constructor(private readonly maxKeys: number) {}

  get size(): number {
    return this.entries.size;
  }

  add(c: OutcomeCount): boolean {
    if (c.count <= 0) return true;
    const key = `${c.minute}\u0000${c.type}\u0000${c.outcome}\u0000${c.reason}\u0000${c.origin}\u0000${c.app}`;
    const e = this.entries.get(key);
    if (e !== undefined) {
      e.count += c.count;
      return true;
    }
    if (this.entries.size >= this.maxKeys) return false;
    this.entries.set(key, { ...c });
    return true;
  }

  /** Everything counted so far; the tally starts empty again. */
  take(): OutcomeCount[] {
    const taken = [...this.entries.values()];
    this.entries = new Map();
    return taken;
  }
}
