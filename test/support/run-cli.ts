import { spawn } from 'node:child_process';
import path from 'node:path';

export const CLI = path.resolve(__dirname, '../../dist/src/cli.js');

/** What a `sluice …` run that ends by itself printed, and how it ended. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Milliseconds from spawn to exit. */
  readonly tookMs: number;
}

/**
 * Runs `node dist/src/cli.js <args>` as a user types it (no memory flags: the bin's own path) with
 * `env` on top of PATH and HOME only, and waits for it to end (killed after `timeoutMs`).
 */
export function runCli(
  args: readonly string[],
  env: Record<string, string> = {},
  o: { timeoutMs?: number; input?: string } = {},
): Promise<CliRun> {
  const started = Date.now();
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (o.input !== undefined) child.stdin.end(o.input);
  else child.stdin.end();
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 20_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, tookMs: Date.now() - started });
    }),
  );
}
