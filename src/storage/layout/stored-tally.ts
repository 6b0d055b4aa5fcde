import type { OutcomeCount, StoredGroup } from '../../loss-map/outcome';
import { minuteOf } from '../../loss-map/outcome';

/**
 * The `stored` counts of one write transaction, per (app, minute, type) of the rows really
 * inserted: what PostgreSQL's triggers count (postgres/migrations/005_outcomes.ts), for a writer
 * that sees each row's fate itself (SQLite).
 */
export class StoredTally {
  private readonly counts = new Map<string, { app: string; minute: number; type: string; count: number }>();

  add(app: string, ts: number, type: string): void {
    const minute = minuteOf(ts);
    const key = `${minute}\u0000${type}\u0000${app}`;
    const c = this.counts.get(key);
    if (c === undefined) this.counts.set(key, { app, minute, type, count: 1 });
    else c.count++;
  }

  /** The rows counted, per (app, minute, type). */
  groups(): StoredGroup[] {
    return [...this.counts.values()].map((c) => ({ ...c }));
  }

  *rows(): Iterable<OutcomeCount> {
    for (const c of this.counts.values()) yield { ...c, outcome: 'stored', reason: '', origin: '' };
  }
}
