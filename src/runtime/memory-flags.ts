/**
 * The V8 heap settings every long-running Sluice process starts with: the one place their values
 * live. `npm start` (package.json), the Docker image (Dockerfile `NODE_OPTIONS`, and its
 * `ENTRYPOINT` for the flag Node refuses there), `sluice cluster` (its collector processes) and the
 * bench pass them to Node; `sluice serve` and `sluice worker` started any other way relaunch
 * themselves with them (src/runtime/relaunch.ts). A unit test keeps package.json and the
 * Dockerfile equal to these values.
 */

/** A V8 heap setting: the flag and the value Sluice gives it. */
export interface MemoryFlag {
  /** Node/V8 flag, without `=value`. */
  readonly flag: string;
  /** Megabytes (MiB). */
  readonly mib: number;
  /** Whether Node 20 takes it in `NODE_OPTIONS` (it refuses some V8 flags there). */
  readonly inNodeOptions: boolean;
}

/**
 * The old generation's cap (MiB): long-lived objects, i.e. the lanes' queued events and the
 * in-flight requests. With the default lane bounds (32 + 16 MiB of event bytes) the heap stays far
 * below it; it bounds the process (V8 collects harder as it nears the cap, then fails with "heap
 * out of memory") instead of letting it grow to V8's default of about 4 GiB on a 64-bit host.
 * Raise it with the lanes (`SLUICE_QUEUE_MAX_BYTES`, `SLUICE_ERROR_QUEUE_MAX_BYTES`).
 */
export const MAX_OLD_SPACE: MemoryFlag = {
  flag: '--max-old-space-size',
  mib: 512,
  inNodeOptions: true,
};

/**
 * One semi-space of the young generation (MiB; the young generation takes 3 of them). Node 20's
 * default (16 MiB) lets a scavenge copy up to 16 MiB of survivors at a time: pauses of 5–20 ms
 * under load, which every request in line waits out. A smaller one scavenges more often, each
 * pause shorter.
 */
export const MAX_SEMI_SPACE: MemoryFlag = {
  flag: '--max-semi-space-size',
  mib: 8,
  inNodeOptions: true,
};

/**
 * The old generation's size before V8 starts collecting it in earnest (MiB). V8 starts it at a few
 * MiB and grows it slowly, and a collector's old generation holds little that lives long: queued
 * events are promoted and die there within a flush. Left to V8, it ran a full mark-compact every
 * 150–200 ms under load (bench overload), each a pause of 3–25 ms plus concurrent marking on the
 * other core; from 64 MiB, about once a second, and the bench's CPU per stored event fell by 10–20%.
 * The cost is resident memory: about this much more garbage is held before it is collected.
 */
export const INITIAL_OLD_SPACE: MemoryFlag = {
  flag: '--initial-old-space-size',
  mib: 64,
  inNodeOptions: false,
};

/** Every memory flag, in the order they are passed. */
export const MEMORY_FLAGS: readonly MemoryFlag[] = [MAX_OLD_SPACE, MAX_SEMI_SPACE, INITIAL_OLD_SPACE];

/** `--max-old-space-size=512`… */
export function flagArgument(f: MemoryFlag): string {
  return `${f.flag}=${f.mib}`;
}

/** Every memory flag as Node arguments, e.g. `['--max-old-space-size=512', '--max-semi-space-size=8', …]`. */
export function memoryFlagArgs(): string[] {
  return MEMORY_FLAGS.map(flagArgument);
}

/** The flags the Docker image sets in `NODE_OPTIONS`, where a user can replace them. */
export function nodeOptionsFlagArgs(): string[] {
  return MEMORY_FLAGS.filter((f) => f.inNodeOptions).map(flagArgument);
}

/** The flags Node refuses in `NODE_OPTIONS`: the Docker image puts them on node's command line. */
export function commandLineOnlyFlagArgs(): string[] {
  return MEMORY_FLAGS.filter((f) => !f.inNodeOptions).map(flagArgument);
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
