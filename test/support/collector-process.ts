import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { memoryFlagArgs } from '../../src/runtime/memory-flags';
import { waitFor } from './http';

const CLI = path.resolve(__dirname, '../../dist/src/cli.js');

export { freePort } from '../../src/cluster/free-port';
import { freePort } from '../../src/cluster/free-port';

/** A collector running as its own process (`node dist/src/cli.js serve`), as in production. */
export interface CollectorProcess {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  /** stdout + stderr lines so far. */
  readonly output: string[];
  /** Resolves with the exit code once the process has ended. */
  readonly exited: Promise<number | null>;
  /** Sends SIGTERM and waits for the exit code. */
  stop(): Promise<number | null>;
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
  const harness =
    opts.defaults === 'user'
      ? {}
      : {
          SLUICE_DRAIN_DELAY_MS: '0',
          // Limits are off unless a test sets them: most tests measure other things at rates above 100/s.
          SLUICE_RATE_LIMIT: '0',
          // So is load shedding: jest workers share two cores (see in-process.ts).
          SLUICE_SHED_LAG_MS: '0',
        };
  // The flags `npm start` passes: the child is the collector itself, not a relaunching parent.
  const child = spawn(process.execPath, [...memoryFlagArgs(), CLI, 'serve'], {
    env: {
      PATH: process.env.PATH ?? '',
      SLUICE_HOST: '127.0.0.1',
      SLUICE_LOG_LEVEL: 'warn',
      ...harness,
      // The OTLP receiver is off unless a test gives it a port: its default (4318) is one per machine.
      SLUICE_OTLP_PORT: '0',
      ...env,
      SLUICE_PORT: String(port),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => output.push(...chunk.split('\n').filter(Boolean)));
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const proc: CollectorProcess = {
    url,
    port,
    child,
    output,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
  if (opts.waitReady !== false) {
    let dead = false;
    void exited.then(() => (dead = true));
    await waitFor(
      `collector on ${url} to be ready`,
      async () => {
        if (dead) throw new Error(`collector exited early:\n${output.join('\n')}`);
        const res = await fetch(`${url}/readyz`).catch(() => null);
        return res?.status === 200;
      },
      opts.readyTimeoutMs ?? 15_000,
    ).catch(async (err: unknown) => {
      child.kill('SIGKILL');
      throw err;
    });
  }
  return proc;
}

/** Peak resident memory of a process (KiB), from /proc. */
export async function peakRssKiB(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) : NaN;
}
