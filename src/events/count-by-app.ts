/**
 * How many of `items` each app has, apps in the order they first come. A run of items of one app (a
 * request's events usually are one) costs one map update, not one per item.
 */
export function countByApp(items: readonly { readonly app: string }[]): Map<string, number> {
  const counts = new Map<string, number>();
  let app: string | null = null;
  let run = 0;
  for (const item of items) {
    if (item.app === app) {
      run++;
      continue;
    }
    if (app !== null) counts.set(app, (counts.get(app) ?? 0) + run);
    app = item.app;
    run = 1;
  }
  if (app !== null) counts.set(app, (counts.get(app) ?? 0) + run);
  return counts;
}
