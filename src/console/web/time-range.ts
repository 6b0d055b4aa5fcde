import { select } from './dom';

/** A time range a view offers: its `range` parameter, its label and its length (milliseconds). */
export type TimeRange = readonly [value: string, label: string, lengthMs: number];

/** Every range, shortest first; a view offers a prefix of them. */
export const TIME_RANGES: readonly TimeRange[] = [
  ['15m', 'last 15 minutes', 15 * 60_000],
  ['1h', 'last hour', 3_600_000],
  ['6h', 'last 6 hours', 6 * 3_600_000],
  ['24h', 'last 24 hours', 24 * 3_600_000],
  ['7d', 'last 7 days', 7 * 24 * 3_600_000],
  ['30d', 'last 30 days', 30 * 24 * 3_600_000],
];

/** The range `params` names among `choices`; the last hour when it names none of them. */
export function chosenRange(params: URLSearchParams, choices: readonly TimeRange[]): TimeRange {
  return choices.find((r) => r[0] === params.get('range')) ?? (TIME_RANGES[1] as TimeRange);
}

/** The `range` select of a view's filters. */
export function rangeSelect(choices: readonly TimeRange[], range: TimeRange): HTMLLabelElement {
  return select(
    'range',
    choices.map(([value, label]) => [value, label] as const),
    range[0],
    'Range',
  );
}
