import type { StreamConfig } from '@nats-io/jetstream';

/** The part of a stream's configuration Sluice sets from its settings. */
export type ManagedStreamConfig = Pick<
  StreamConfig,
  | 'name'
  | 'subjects'
  | 'retention'
  | 'storage'
  | 'discard'
  | 'max_bytes'
  | 'max_age'
  | 'duplicate_window'
  | 'num_replicas'
>;

/** A setting in which an existing stream differs from the configured value. */
export interface StreamDifference {
  readonly stream: unknown;
  readonly setting: unknown;
}

/**
 * How an existing stream differs from what the settings ask for, split into what a start-up
 * updates and what it leaves alone:
 * - `update`: limits and subjects, Sluice's own settings (`SLUICE_NATS_MAX_BYTES`, ...), set to
 *   the configured values; retention and storage too, which JetStream refuses to change in place
 *   (its error then says so);
 * - `kept`: the replica count, which is the operator's: raising it copies the whole stream to more
 *   servers, lowering it gives up copies, and processes started with different settings would
 *   otherwise rewrite it at each start, the last one winning.
 */
export function streamDifferences(
  existing: Partial<StreamConfig>,
  wanted: ManagedStreamConfig,
): { update: Record<string, StreamDifference>; kept: Record<string, StreamDifference> } {
  const update: Record<string, StreamDifference> = {};
  const kept: Record<string, StreamDifference> = {};
  const fields = [
    'subjects',
    'retention',
    'storage',
    'discard',
    'max_bytes',
    'max_age',
    'duplicate_window',
  ] as const;
  for (const field of fields) {
    if (!sameValue(existing[field], wanted[field])) {
      update[field] = { stream: existing[field], setting: wanted[field] };
    }
  }
  // JetStream reports an R1 stream's replicas as 1 (or 0, "default", on some versions).
  const replicas = existing.num_replicas || 1;
  if (replicas !== wanted.num_replicas)
    kept.num_replicas = { stream: replicas, setting: wanted.num_replicas };
  return { update, kept };
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) {
    const x = [...a].sort();
    const y = [...b].sort();
    return x.length === y.length && x.every((v, i) => v === y[i]);
  }
  return a === b;
}
