/**
 * Whether a parsed JSON value nests arrays/objects deeper than `maxDepth` (the value itself is
 * level 1). V8's `JSON.parse` is iterative, so a hostile body cannot overflow the stack while it
 * is parsed; this check keeps any later walk shallow and answers `too_deep`. It descends at most
 * `maxDepth` levels, whatever the input.
 */
export function exceedsJsonDepth(value: unknown, maxDepth: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (maxDepth <= 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (exceedsJsonDepth(value[i], maxDepth - 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) if (exceedsJsonDepth(record[key], maxDepth - 1)) return true;
  return false;
}
