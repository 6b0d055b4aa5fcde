import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../dist/test/support/processes/collector-with-gc.js');

/** Heap and resident memory of a collector process after full garbage collections (bytes). */
export interface CollectorMemory {
  readonly heapUsed: number;
  readonly rss: number;
}

/** A collector process whose retained memory a test can measure (see processes/collector-with-gc.ts). */
export interface MeasuredCollector {
  readonly url: string;
  readonly child: ChildProcess;
  /** stdout + stderr so far. */
  readonly output: string[];
  /** Whether the process is still running. */
  alive(): boolean;
  /** Runs full GCs in the collector and returns what its memory still holds. */
  measure(): Promise<CollectorMemory>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts a collector with `env` on top of an empty environment: every setting not given is the
 * default a user gets, except the OTLP receiver, off unless `env` gives it a port (its default,
 * 4318, is one port per machine: two such collectors at once would collide). Build first
 * (`npm run build`; `npm test` does).
 */
export async function startMeasuredCollector(
  env: Record<string, string>,
  readyTimeoutMs = 15_000,
): Promise<MeasuredCollector> {
  const child = fork(SCRIPT, [], {
    execArgv: ['--expose-gc'],
    env: {
      PATH: process.env.PATH ?? '',
      SLUICE_HOST: '127.0.0.1',
      SLUICE_PORT: '0',
      SLUICE_OTLP_PORT: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => output.push(...chunk.split('\n').filter(Boolean)));
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`collector not ready after ${readyTimeoutMs} ms:\n${output.join('\n')}`));
    }, readyTimeoutMs);
    child.on('message', (msg: { type?: string; url?: string }) => {
      if (msg.type !== 'ready' || msg.url === undefined) return;
      clearTimeout(timer);
      resolve(msg.url);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`collector exited (${code}) before it was ready:\n${output.join('\n')}`));
    });
  });
  return {
    url,
    child,
    output,
    alive: () => child.exitCode === null && child.signalCode === null,
    measure: () =>
      new Promise<CollectorMemory>((resolve, reject) => {
        const onMessage = (msg: { type?: string; heapUsed?: number; rss?: number }): void => {
          if (msg.type !== 'memory') return;
          child.off('message', onMessage);
          resolve({ heapUsed: msg.heapUsed ?? NaN, rss: msg.rss ?? NaN });
        };
        child.on('message', onMessage);
        if (!child.send({ type: 'measure' })) reject(new Error('collector IPC channel is closed'));
      }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
