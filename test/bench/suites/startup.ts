/**
 * Time to ready from a warm clone: `npm start` (its `prestart` build, then the collector) in the
 * repo, nothing changed since the last build, until `GET /readyz` answers 200, with the defaults a
 * user gets (tier 1, a fresh SQLite file); beside it the build alone and the collector alone (its
 * floor). Each the median of a few rounds.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../../src/dev-cluster/free-port';
import { CLI_SCRIPT, cleanEnv, collectorNodeArgs } from '../collector-process';
import type { BenchContext } from '../context';
import { bounded, figure, round } from '../rows';
import type { BenchRow } from '../types';

const SUITE = 'startup';
const REPO = path.resolve(__dirname, '..', '..', '..', '..');
const ROUNDS = 3;
/** What a warm `npm start` may take before it answers ready (milliseconds). */
const WARM_START_WITHIN_MS = 5000;
const READY_TIMEOUT_MS = 120_000;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

async function ready(port: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
  return res?.status === 200;
}

/**
 * Runs `command args` in the repo (its own process group) until `/readyz` on a free port answers
 * 200; returns the milliseconds that took, then stops the group and waits for it to end.
 */
async function timeToReady(command: string, args: readonly string[]): Promise<number> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-startup-'));
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: REPO,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      ...cleanEnv(),
      SLUICE_HOST: '127.0.0.1',
      SLUICE_PORT: String(port),
      SLUICE_OTLP_PORT: '0',
      SLUICE_SQLITE_PATH: path.join(dataDir, 'sluice.db'),
      SLUICE_LOG_LEVEL: 'warn',
      SLUICE_DRAIN_DELAY_MS: '0',
    },
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-4096)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let ended = false;
  void exited.then(() => (ended = true));
  try {
    for (;;) {
      if (ended) throw new Error(`${command} ${args.join(' ')} exited before it was ready: ${stderr}`);
      if (await ready(port)) return performance.now() - started;
      if (performance.now() - started > READY_TIMEOUT_MS)
        throw new Error(`not ready in ${READY_TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    if (child.pid !== undefined && !ended) process.kill(-child.pid, 'SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function timeOf(command: string, args: readonly string[]): Promise<number> {
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO, stdio: 'ignore', env: cleanEnv() });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited ${code}`)),
    );
  });
  return performance.now() - started;
}

export async function runStartupBench(ctx: BenchContext): Promise<BenchRow[]> {
  ctx.progress('startup: a first build, so the clone is warm');
  await timeOf('npm', ['run', 'build', '--silent']);
  const build: number[] = [];
  const start: number[] = [];
  const collector: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    build.push(await timeOf('npm', ['run', 'build', '--silent']));
    start.push(await timeToReady('npm', ['start', '--silent']));
    collector.push(await timeToReady(process.execPath, [...collectorNodeArgs(), CLI_SCRIPT, 'serve']));
  }
  const warmStart = round(median(start));
  return [
    bounded(
      SUITE,
      'npm start → ready, warm clone (nothing changed since the last build)',
      warmStart,
      'ms',
      `< ${WARM_START_WITHIN_MS} ms`,
      warmStart < WARM_START_WITHIN_MS,
      { rounds: ROUNDS, max: round(Math.max(...start)) },
    ),
    figure(SUITE, 'npm run build, nothing changed', round(median(build)), 'ms', { rounds: ROUNDS }),
    figure(SUITE, 'sluice serve → ready, no build (the floor)', round(median(collector)), 'ms', {
      rounds: ROUNDS,
    }),
  ];
}
