/** One event of the read API (its wire form) as a line of text, for `sluice tail`. */
export function eventLine(e: Record<string, unknown>): string {
  const ts = typeof e.ts === 'number' ? new Date(e.ts).toISOString() : String(e.ts);
  const source = (e.source ?? {}) as Record<string, unknown>;
  const parts = [ts, String(e.type).padEnd(9), String(e.name), String(source.app ?? '')];
  const error = e.error as Record<string, unknown> | undefined;
  if (error !== undefined)
    parts.push(`${error.kind === undefined ? '' : `${String(error.kind)}: `}${String(error.message)}`);
  if (typeof e.message === 'string') parts.push(e.message);
  if (typeof e.value === 'number') parts.push(`value=${e.value}`);
  const summary = e.summary as Record<string, unknown> | undefined;
  if (summary !== undefined) parts.push(`count=${String(summary.count)} avg=${String(summary.avg)}`);
  const attributes = Object.entries((e.attributes ?? {}) as Record<string, unknown>);
  if (attributes.length > 0) parts.push(attributes.map(([k, v]) => `${k}=${String(v)}`).join(' '));
  return parts.join('  ');
}
