import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';

/** One read: how long until its whole answer arrived, its status and size. */
export interface TimedRead {
  readonly ms: number;
  readonly status: number;
  readonly bytes: number;
  /** The answer's `error` code when it was not 200, else ''. */
  readonly error: string;
}

/** Longest one read may take before the bench gives up on it (milliseconds). */
const READ_TIMEOUT_MS = 60_000;

export async function timeRead(origin: string, path: string): Promise<TimedRead> {
  const started = performance.now();
  const res = await fetch(`${origin}${path}`, { signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
  const body = await res.arrayBuffer();
  const ms = performance.now() - started;
  let error = '';
  if (res.status !== 200) {
    try {
      error = String((JSON.parse(Buffer.from(body).toString('utf8')) as { error?: unknown }).error ?? '');
    } catch {
      error = 'unparsable';
    }
  }
  return { ms, status: res.status, bytes: body.byteLength, error };
}

/**
 * Writes dirty pages and empties the kernel's page cache (`sync; echo 3 > /proc/sys/vm/drop_caches`),
 * so the next read of the database's files comes from disk. Needs root; resolves false where it
 * cannot be done (then "cold" means a fresh collector and its fresh connections only). Every
 * process of the box loses its cached pages, not only PostgreSQL's.
 */
export function dropOsCache(): boolean {
  try {
    execFileSync('sync');
    writeFileSync('/proc/sys/vm/drop_caches', '3\n');
    return true;
  } catch {
    return false;
  }
}

/** The q-quantile (0..1) of `values` by nearest rank; NaN for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}
