/** Longest key list sorted by insertion; longer ones go to `Array.prototype.sort`. */
const INSERTION_SORT_MAX = 32;

/**
 * Sorts attribute keys in place by UTF-16 code unit, as `Array.prototype.sort()` does. Keys
 * usually arrive sorted already (the SDK writes them so): then this is one pass that allocates
 * nothing, where `Array.prototype.sort` builds its work state on every call, which under load was
 * a fifth of all the collector's allocation. Insertion sort is quadratic, so only short lists use
 * it; `SLUICE_MAX_ATTRIBUTES` may allow long ones.
 */
export function sortKeys(keys: string[]): void {
  if (keys.length > INSERTION_SORT_MAX) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    if ((keys[j] as string) <= key) continue;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
}
