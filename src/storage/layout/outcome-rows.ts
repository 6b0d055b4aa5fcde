import type { OutcomeName, OutcomeOrigin, OutcomeRow } from '../../loss-map/outcome';

/** A row of the outcome read as either driver returns it (bigints as text or number). */
export interface OutcomeSumRow {
  readonly minute: string | number;
  readonly type: string;
  readonly outcome: string;
  readonly reason: string;
  readonly origin: string;
  readonly count: string | number;
}

export function outcomeRowOf(r: OutcomeSumRow): OutcomeRow {
  return {
    minute: Number(r.minute),
    type: r.type,
    outcome: r.outcome as OutcomeName,
    reason: r.reason,
    origin: r.origin as OutcomeOrigin,
    count: Number(r.count),
  };
}
