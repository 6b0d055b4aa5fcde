import type { EventType } from '../../events/types';

/** Events per type, in a record of the four types (no map per call: this runs per offer). */
export function countByType(items: readonly { readonly type: EventType }[]): Record<EventType, number> {
  const counts: Record<EventType, number> = { error: 0, lifecycle: 0, metric: 0, log: 0 };
  for (const item of items) counts[item.type]++;
  return counts;
}

/** Events per app, apps in the order they first come. */
export function countByApp(items: readonly { readonly app: string }[]): Map<string, number> {
  const counts = new Map<string, number>();
  let app: string | undefined;
  let run = 0;
  // Runs of one app are summed before the map is touched: a request's events mostly come in runs.
  for (const item of items) {
    if (item.app === app) {
      run++;
      continue;
    }
    if (app !== undefined) counts.set(app, (counts.get(app) ?? 0) + run);
    app = item.app;
    run = 1;
  }
  if (app !== undefined) counts.set(app, (counts.get(app) ?? 0) + run);
  return counts;
}
