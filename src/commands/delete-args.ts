import { parseTimestamp } from '../http/timestamp';
import { parseFlags, UsageError } from '../config/flags';
import { isUuid } from '../events/uuid';

export const DELETE_USAGE = `Usage: sluice delete --app APP [--before TIME | --id ID] [--yes] [--option value ...]

Deletes an app's data from storage (a privacy request): its events, for its metrics the 1m and
1h rollups, and its loss-map rows (what they left pending stays, one count per minute and type, so
events still on their way add up), on PostgreSQL or SQLite as the storage options below say (the
same storage the collectors use; run it where they can reach it). Asks for the app's name to
confirm unless --yes.

  --app APP       the app whose data goes (required)
  --before TIME   only data older than TIME (milliseconds since the epoch or ISO 8601, e.g.
                  2026-11-01): events with ts before it, rollup buckets that end by it; a bucket
                  holding TIME is recomputed from the events left by the next downsample run;
                  loss-map minutes wholly before TIME
  --id ID         only the event(s) with this id (every ts); its rollup buckets are recomputed;
                  the loss map keeps counting it as stored
  --yes           do not ask (scripts)
`;

export interface DeleteArgs {
  readonly app: string;
  /** Epoch milliseconds, exclusive; null: all of the app's data. */
  readonly before: number | null;
  readonly id: string | null;
  readonly yes: boolean;
  /** The other flags: settings (`--database-url`, …). */
  readonly settingsArgs: readonly string[];
}

export function parseDeleteArgs(args: readonly string[]): DeleteArgs {
  const f = parseFlags(args, { app: 'value', before: 'value', id: 'value', yes: 'switch' }, true);
  const app = f.values.get('app');
  if (app === undefined || app === '') throw new UsageError('--app is required');
  const rawBefore = f.values.get('before');
  const before = rawBefore === undefined ? null : parseTimestamp(rawBefore);
  if (before === null && rawBefore !== undefined) {
    throw new UsageError(`--before needs milliseconds since the epoch or ISO 8601 (got "${rawBefore}")`);
  }
  const id = f.values.get('id') ?? null;
  if (id !== null && !isUuid(id)) throw new UsageError(`--id needs an event id, a UUID (got "${id}")`);
  if (id !== null && before !== null) throw new UsageError('--before and --id do not go together');
  return { app, before, id, yes: f.switches.has('yes'), settingsArgs: f.rest };
}
