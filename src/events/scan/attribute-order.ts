import type { ScannedEvent } from './scanned-event';

/**
 * Orders the attributes by key in code-unit order (keys below U+E000 order alike as UTF-8 bytes);
 * false when two keys are equal (`JSON.parse` would keep the last: left to the typed path).
 */
export function sortAttributes(text: Uint8Array, f: ScannedEvent): boolean {
  const { order, keyStart, keyEnd } = f;
  const n = f.attributeCount;
  for (let a = 0; a < n; a++) {
    let j = a - 1;
    while (j >= 0) {
      const b = order[j] as number;
      const cmp = compareBytes(
        text,
        keyStart[b] as number,
        keyEnd[b] as number,
        keyStart[a] as number,
        keyEnd[a] as number,
      );
      if (cmp === 0) return false;
      if (cmp < 0) break;
      order[j + 1] = b;
      j--;
    }
    order[j + 1] = a;
  }
  return true;
}

function compareBytes(text: Uint8Array, as: number, ae: number, bs: number, be: number): number {
  const n = Math.min(ae - as, be - bs);
  for (let k = 0; k < n; k++) {
    const d = (text[as + k] as number) - (text[bs + k] as number);
    if (d !== 0) return d;
  }
  return ae - as - (be - bs);
}
