import type { EventType } from '../../events/types';

/** Events per type, in a record of the four types (no map per call: this runs per offer). */
export function countByType(items: readonly { readonly type: EventType }[]): Record<EventType, number> {
  const counts: Record<EventType, number> = { error: 0, lifecycle: 0, metric: 0, log: 0 };
  for (const item of items) counts[item.type]++;
  return counts;
}
