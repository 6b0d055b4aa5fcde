/**
 * The V8 heap settings every long-running Sluice process starts with: the one place their values
 * live. `npm start` (package.json), the Docker image (Dockerfile `NODE_OPTIONS`), `sluice cluster`
 * (its collector processes) and the bench pass them to Node; `sluice serve` and `sluice worker`
 * started any other way relaunch themselves with them (src/runtime/relaunch.ts). A unit test keeps
 * package.json and the Dockerfile equal to these values.
 */

/** A V8 heap setting: the flag and the value Sluice gives it. */
export interface MemoryFlag {
  /** Node/V8 flag, without `=value`. */
  readonly flag: string;
  /** Megabytes (MiB). */
  readonly mib: number;
}

/**
 * The old generation's cap (MiB): long-lived objects, i.e. the lanes' queued events and the
 * in-flight requests. With the default lane bounds (32 + 16 MiB of event bytes) the heap stays far
 * below it; it bounds the process (V8 collects harder as it nears the cap, then fails with "heap
 * out of memory") instead of letting it grow to V8's default of about 4 GiB on a 64-bit host.
 * Raise it with the lanes (`SLUICE_QUEUE_MAX_BYTES`, `SLUICE_ERROR_QUEUE_MAX_BYTES`).
 */
export const MAX_OLD_SPACE: MemoryFlag = { flag: '--max-old-space-size', mib: 512 };

/**
 * One semi-space of the young generation (MiB; the young generation takes 3 of them). Node 20's
 * default (16 MiB) lets a scavenge copy up to 16 MiB of survivors at a time: pauses of 5–20 ms
 * under load, which every request in line waits out. A smaller one scavenges more often, each
 * pause shorter.
 */
export const MAX_SEMI_SPACE: MemoryFlag = { flag: '--max-semi-space-size', mib: 8 };

/** Every memory flag, in the order they are passed. */
export const MEMORY_FLAGS: readonly MemoryFlag[] = [MAX_OLD_SPACE, MAX_SEMI_SPACE];

/** `--max-old-space-size=512`… */
export function flagArgument(f: MemoryFlag): string {
  return `${f.flag}=${f.mib}`;
}

/** Every memory flag as Node arguments, e.g. `['--max-old-space-size=512', '--max-semi-space-size=8']`. */
export function memoryFlagArgs(): string[] {
  return MEMORY_FLAGS.map(flagArgument);
}

/** V8 reads `_` and `-` alike in flag names: `--max_old_space_size` is `--max-old-space-size`. */
function flagName(token: string): string {
  const eq = token.indexOf('=');
  return (eq === -1 ? token : token.slice(0, eq)).replace(/_/g, '-');
}

/**
 * The memory flags neither the Node arguments (`process.execArgv`) nor `NODE_OPTIONS` set, as
 * arguments to add. A value the user gave, by either way, is theirs: it is never overridden.
 */
export function missingMemoryFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = new Set(
    [...execArgv, ...(nodeOptions ?? '').split(/\s+/)].filter((t) => t.startsWith('--')).map(flagName),
  );
  return MEMORY_FLAGS.filter((f) => !given.has(f.flag)).map(flagArgument);
}

/**
 * The V8 heap limit (`v8.getHeapStatistics().heap_size_limit`, bytes) these flags give on a 64-bit
 * Node 20: the old generation's cap plus the young generation's, 3 semi-spaces.
 */
export function expectedHeapLimitBytes(
  oldSpaceMiB = MAX_OLD_SPACE.mib,
  semiSpaceMiB = MAX_SEMI_SPACE.mib,
): number {
  return (oldSpaceMiB + 3 * semiSpaceMiB) * 1024 * 1024;
}
