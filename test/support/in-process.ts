import { startCollector, type RunningCollector } from '../../src/compose/collector';
import { loadConfig } from '../../src/config/load';
import { createLogger } from '../../src/log/logger';

export interface InProcessCollector {
  readonly url: string;
  readonly collector: RunningCollector;
  /** Resolves with the code the shutdown sequence ended with. */
  readonly exited: Promise<number>;
  /** Runs the real shutdown sequence and waits for its end. */
  stop(): Promise<number>;
}

/**
 * A collector in the test process, from the same assembly as `sluice serve`, on a free port.
 * `defaults: 'user'`: only `env` on top of the defaults a user gets (rate limit and shedding on);
 * default `harness`: rate limits and shedding off unless `env` sets them.
 */
export async function startInProcess(
  env: Record<string, string>,
  opts: { defaults?: 'user' | 'harness' } = {},
): Promise<InProcessCollector> {
  const harness =
    opts.defaults === 'user'
      ? {}
      : {
          // Limits are off unless a test sets them.
          SLUICE_RATE_LIMIT: '0',
          // So is load shedding: jest workers share two cores, and a request refused because another
          // worker held the CPU is a flake, not a finding (the shedding tests set it).
          SLUICE_SHED_LAG_MS: '0',
          // PostgreSQL: a resent metric sample is stored again and its copy removed, its loss-map
          // count corrected, by the merge job (migration 012): here at once, so a test of resends
          // waits on the correction briefly. With the user's defaults the job waits out the resend
          // window (merge-metric-blocks-defaults.test.ts).
          SLUICE_METRIC_RESEND_WINDOW_MS: '0',
          SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS: '250',
        };
  const config = loadConfig({
    SLUICE_HOST: '127.0.0.1',
    SLUICE_PORT: '0',
    SLUICE_DRAIN_DELAY_MS: '0',
    SLUICE_LOG_LEVEL: 'silent',
    ...harness,
    // The OTLP receiver is off unless a test gives it a port: its default (4318) is one port for all.
    SLUICE_OTLP_PORT: '0',
    ...env,
  });
  let resolveExit!: (code: number) => void;
  const exited = new Promise<number>((r) => (resolveExit = r));
  const collector = await startCollector(config, {
    logger: createLogger(config.logLevel),
    exit: (code) => resolveExit(code),
  });
  let stopping: Promise<number> | null = null;
  return {
    url: collector.url,
    collector,
    exited,
    stop() {
      if (!stopping) {
        collector.shutdown('test');
        stopping = exited;
      }
      return stopping;
    },
  };
}
