import { EVENT_TYPES, type WireEvent } from './types';

/**
 * Where the buffer survives a restart (optional). The client loads once at
 * start and saves a snapshot of everything not yet acknowledged (buffered
 * and in flight) after each round of sending, when the page is hidden and on
 * close. A snapshot may hold events the collector took meanwhile: resending
 * them is safe, `(id, ts)` dedupes them.
 */
export interface BufferStore {
  /** Events a previous run saved; `[]` when none. */
  load(): Promise<readonly WireEvent[]>;
  /** Replaces what is saved with `events` (highest priority first). */
  save(events: readonly WireEvent[]): Promise<void>;
  /**
   * Optional: what the client has not yet reported (docs/sdk.md, "Client reports"), saved with
   * the events so the loss map survives a restart. A store without it loses that part.
   */
  saveReport?(state: unknown): Promise<void>;
  /** Optional: what `saveReport` saved; `null` when none. */
  loadReport?(): Promise<unknown>;
}

/**
 * Keeps the entries of saved JSON that look like wire events; a corrupt store
 * loads as empty. For a `BufferStore` of your own: `load()` can return
 * `parseSavedEvents(JSON.parse(text))`.
 */
export function parseSavedEvents(raw: unknown): WireEvent[] {
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (e: unknown): e is WireEvent =>
      typeof e === 'object' &&
      e !== null &&
      typeof (e as WireEvent).id === 'string' &&
      Number.isSafeInteger((e as WireEvent).ts) &&
      typeof (e as WireEvent).name === 'string' &&
      (EVENT_TYPES as readonly string[]).includes((e as WireEvent).type) &&
      typeof (e as WireEvent).source?.app === 'string',
  );
}
