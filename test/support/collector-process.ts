import { spawnSluice, waitUntilReady, type SluiceProcess } from './sluice-process';

export { freePort } from '../../src/dev-cluster/free-port';
import { freePort } from '../../src/dev-cluster/free-port';

/** A collector running as its own process (`node dist/src/cli.js serve`), as in production. */
export interface CollectorProcess extends SluiceProcess {
  readonly url: string;
  readonly port: number;
}

/**
 * Starts a collector with `env` (on top of a quiet, fast-draining default) and
 * waits until `/readyz` answers 200. Build first: `npm test` runs the build.
 */
export async function startCollectorProcess(
  env: Record<string, string>,
  opts: {
    readyTimeoutMs?: number;
    waitReady?: boolean;
    /**
     * `user`: only `env` on top of the defaults a user gets (rate limit, shedding, drain delay on).
     * Default `harness`: rate limits and shedding off, no drain delay, unless `env` sets them.
     */
    defaults?: 'user' | 'harness';
  } = {},
): Promise<CollectorProcess> {
  const port = env.SLUICE_PORT ? Number(env.SLUICE_PORT) : await freePort();
  const harness: Record<string, string> =
    opts.defaults === 'user'
      ? {}
      : {
          SLUICE_DRAIN_DELAY_MS: '0',
          // Limits are off unless a test sets them: most tests measure other things at rates above 100/s.
          SLUICE_RATE_LIMIT: '0',
          // So is load shedding: jest workers share two cores (see in-process.ts).
          SLUICE_SHED_LAG_MS: '0',
          // PostgreSQL: the merge job removes a resent metric sample's copy and corrects its count
          // at once (see in-process.ts).
          SLUICE_METRIC_RESEND_WINDOW_MS: '0',
          SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS: '250',
        };
  const proc = spawnSluice('serve', {
    ...harness,
    // The OTLP receiver is off unless a test gives it a port: its default (4318) is one per machine.
    SLUICE_OTLP_PORT: '0',
    ...env,
    SLUICE_PORT: String(port),
  });
  const url = `http://127.0.0.1:${port}`;
  if (opts.waitReady !== false) await waitUntilReady(proc, 'collector', url, opts.readyTimeoutMs ?? 15_000);
  return { ...proc, url, port };
}

/** Peak resident memory of a process (KiB), from /proc. */
export async function peakRssKiB(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) : NaN;
}
