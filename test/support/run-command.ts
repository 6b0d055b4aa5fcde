import { spawn } from 'node:child_process';

/** What a command that ends by itself printed, and how it ended. */
export interface CommandRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `command` in `cwd` to its end, as a user's shell would: npm's own `npm_*` variables (set
 * when the tests run under `npm test`) are left out, since they would point npm at this repo.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<CommandRun> {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'INIT_CWD'),
  );
  const child = spawn(command, args, { cwd, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
