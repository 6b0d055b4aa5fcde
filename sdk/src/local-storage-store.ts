import { parseSavedEvents, type BufferStore } from './store';

/**
 * A `BufferStore` in `localStorage` under `key` (browsers). Saving is
 * synchronous inside `save`, so it completes even in a `pagehide` handler.
 * When the snapshot exceeds the origin's quota, the lower-priority half is
 * cut until it fits (snapshots are ordered highest priority first).
 * Where `localStorage` is missing or blocked it keeps nothing.
 */
export function localStorageStore(key = 'sluice.buffer'): BufferStore {
  const storage = (): Storage | undefined => {
    try {
      return typeof localStorage !== 'undefined' ? localStorage : undefined;
    } catch {
      return undefined; // access itself throws when storage is disabled
    }
  };
  return {
    async load() {
      const raw = storage()?.getItem(key);
      if (raw === null || raw === undefined) return [];
      try {
        return parseSavedEvents(JSON.parse(raw));
      } catch {
        return [];
      }
    },
    async save(events) {
      const s = storage();
      if (s === undefined) return;
      if (events.length === 0) {
        s.removeItem(key);
        return;
      }
      for (let kept = events; kept.length > 0; kept = kept.slice(0, Math.floor(kept.length / 2))) {
        try {
          s.setItem(key, JSON.stringify(kept));
          return;
        } catch {
          // quota exceeded: try with the higher-priority half
        }
      }
      s.removeItem(key);
    },
    async saveReport(state) {
      try {
        storage()?.setItem(`${key}.report`, JSON.stringify(state));
      } catch {
        // quota exceeded: the report is kept in memory only
      }
    },
    async loadReport() {
      try {
        const raw = storage()?.getItem(`${key}.report`);
        return typeof raw === 'string' ? (JSON.parse(raw) as unknown) : null;
      } catch {
        return null;
      }
    },
  };
}
