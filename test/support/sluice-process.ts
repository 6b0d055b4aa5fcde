import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { memoryFlagArgs } from '../../src/runtime/memory-flags';
import { waitFor } from './http';

const CLI = path.resolve(__dirname, '../../dist/src/cli.js');

/** `node dist/src/cli.js <command>` as its own process, its output captured. Build first: `npm test` runs the build. */
export interface SluiceProcess {
  readonly child: ChildProcess;
  /** stdout + stderr lines so far. */
  readonly output: string[];
  /** Resolves with the exit code once the process has ended. */
  readonly exited: Promise<number | null>;
  /** Sends SIGTERM (unless it has ended) and waits for the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts `sluice <command>` with `env` on top of a quiet default (loopback, log level warn), with
 * the memory flags `npm start` passes: the child is the process itself, not a relaunching parent
 * (so a signal reaches it).
 */
export function spawnSluice(
  command: 'serve' | 'worker',
  env: Record<string, string>,
  opts: {
    /** Working directory (default: the test's): where `./data/sluice.db`, the default SQLite file, is. */
    cwd?: string;
  } = {},
): SluiceProcess {
  const child = spawn(process.execPath, [...memoryFlagArgs(), CLI, command], {
    env: { PATH: process.env.PATH ?? '', SLUICE_HOST: '127.0.0.1', SLUICE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: opts.cwd,
  });
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => output.push(...chunk.split('\n').filter(Boolean)));
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * Waits until `<url>/readyz` answers 200. Fails at once, with the process's output, when it exits
 * first; kills it when the time runs out.
 */
export async function waitUntilReady(p: SluiceProcess, what: string, url: string, timeoutMs: number) {
  let dead = false;
  void p.exited.then(() => (dead = true));
  await waitFor(
    `${what} on ${url} to be ready`,
    async () => {
      if (dead) throw new Error(`${what} exited early:\n${p.output.join('\n')}`);
      const res = await fetch(`${url}/readyz`).catch(() => null);
      return res?.status === 200;
    },
    timeoutMs,
  ).catch((err: unknown) => {
    p.child.kill('SIGKILL');
    throw err;
  });
}

/** The first JSON log line of `msg` in a process's output (`SluiceProcess.output`). */
export function logLine(output: readonly string[], msg: string): Record<string, any> | undefined {
  for (const line of output) {
    if (!line.startsWith('{')) continue;
    const parsed = JSON.parse(line) as Record<string, any>;
    if (parsed.msg === msg) return parsed;
  }
  return undefined;
}
