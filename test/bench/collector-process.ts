import path from 'node:path';
import { freePort } from '../../src/dev-cluster/free-port';
import { memoryFlagArgs } from '../../src/runtime/memory-flags';
import { startService, type ServiceProcess } from './service-process';

/** The collector's settings a bench run varies; everything else is the collector's default. */
export interface CollectorSettings {
  readonly databaseUrl: string;
  readonly ack: 'queued' | 'stored';
  /** `SLUICE_QUEUE_CAPACITY` (events); collector default when absent. */
  readonly laneCapacity?: number;
  /** `SLUICE_QUEUE_MAX_BYTES`; collector default when absent. */
  readonly laneMaxBytes?: number;
  /** `SLUICE_ERROR_QUEUE_CAPACITY` (events). */
  readonly errorLaneCapacity?: number;
  /** `SLUICE_ERROR_QUEUE_MAX_BYTES`. */
  readonly errorLaneMaxBytes?: number;
  readonly writeMethod?: 'unnest' | 'copy';
  /** Extra `SLUICE_*` variables, e.g. `SLUICE_BATCH_SIZE`. */
  readonly extraEnv?: Readonly<Record<string, string>>;
  /** Node flags instead of the default ones (`collectorNodeArgs`), e.g. with `--cpu-prof` when investigating. */
  readonly nodeArgs?: readonly string[];
}

/**
 * Node flags of every bench collector: the memory flags a user's collector runs with, as
 * `npm start` passes them (so the measured process is the collector, never a relaunching parent),
 * or `BENCH_COLLECTOR_NODE_ARGS` (space-separated; e.g. `--max-old-space-size=512
 * --max-semi-space-size=4` when comparing memory settings: give both, or the collector relaunches).
 */
export function collectorNodeArgs(): string[] {
  const given = process.env.BENCH_COLLECTOR_NODE_ARGS;
  return given === undefined ? memoryFlagArgs() : given.split(' ').filter(Boolean);
}

/**
 * `dist/src/cli.js`, next to this file's compiled `dist/test/bench/`; or `BENCH_COLLECTOR_CLI`, the
 * `cli.js` of another build (to measure an older version with the same bench, one after the other).
 */
export const CLI_SCRIPT =
  process.env.BENCH_COLLECTOR_CLI ?? path.resolve(__dirname, '..', '..', 'src', 'cli.js');

/** The environment without any `SLUICE_*` the bench itself was started with. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SLUICE_')) env[k] = v;
  return env;
}

/** Starts `sluice serve` on a free port of 127.0.0.1 and waits until `/readyz` says 200. */
export async function startCollector(s: CollectorSettings): Promise<ServiceProcess> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...cleanEnv(),
    SLUICE_HOST: '127.0.0.1',
    SLUICE_PORT: String(port),
    SLUICE_DATABASE_URL: s.databaseUrl,
    SLUICE_ACK: s.ack,
    SLUICE_LOG_LEVEL: 'warn',
    SLUICE_DRAIN_DELAY_MS: '0',
    // The bench measures capacity: the per-app limit (default 100 events/s) would measure the limiter.
    SLUICE_RATE_LIMIT: '0',
    // The OTLP receiver is off unless a run gives it a port (its default, 4318, is one per machine).
    SLUICE_OTLP_PORT: '0',
    ...(s.laneCapacity !== undefined && { SLUICE_QUEUE_CAPACITY: String(s.laneCapacity) }),
    ...(s.laneMaxBytes !== undefined && { SLUICE_QUEUE_MAX_BYTES: String(s.laneMaxBytes) }),
    ...(s.errorLaneCapacity !== undefined && { SLUICE_ERROR_QUEUE_CAPACITY: String(s.errorLaneCapacity) }),
    ...(s.errorLaneMaxBytes !== undefined && { SLUICE_ERROR_QUEUE_MAX_BYTES: String(s.errorLaneMaxBytes) }),
    ...(s.writeMethod !== undefined && { SLUICE_PG_WRITE_METHOD: s.writeMethod }),
    ...s.extraEnv,
  };
  return startService({
    name: `sluice (ack=${s.ack})`,
    script: CLI_SCRIPT,
    nodeArgs: s.nodeArgs ?? collectorNodeArgs(),
    args: ['serve'],
    env,
    port,
  });
}
