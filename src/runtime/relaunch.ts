/**
 * Starts this command again under Node with the memory flags it lacks (src/runtime/memory-flags.ts),
 * for the launch paths that cannot pass them themselves: the `sluice` bin (`npx sluice serve`, a
 * shebang line cannot carry Node flags portably) and `node dist/src/cli.js` typed by hand. This
 * process stays as a thin parent: it forwards SIGTERM, SIGINT and SIGHUP once, and ends as the
 * child ended (same exit code, or same signal). Node 20 cannot replace its own process image.
 *
 * Failure modes: the child runs in its own process group, so a Ctrl-C in a terminal reaches the
 * parent only and the child gets one SIGINT (a second one would force its shutdown). If the parent
 * dies without forwarding (SIGKILL), the IPC channel between them closes and the child kills itself
 * with SIGKILL too: it never outlives its parent, as a single process would not.
 */
import { spawn } from 'node:child_process';
import { missingMemoryFlags } from './memory-flags';

/** Set in the child's environment: it was relaunched, never relaunch again. */
export const RELAUNCHED_ENV = 'SLUICE_RELAUNCHED';

const FORWARDED: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

export interface RelaunchOptions {
  /** `process.execPath`. */
  readonly execPath: string;
  /** `process.execArgv`: the Node flags this process got; the child gets them too. */
  readonly execArgv: readonly string[];
  /** The script and its arguments: `process.argv.slice(1)`. */
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
}

/**
 * When memory flags are missing (and this process is no relaunched child), starts the child and
 * returns true: the caller does nothing else. Otherwise returns false: run the command here.
 */
export function relaunchWithMemoryFlags(o: RelaunchOptions): boolean {
  if (o.env[RELAUNCHED_ENV] === '1') {
    watchParent();
    return false;
  }
  const missing = missingMemoryFlags(o.execArgv, o.env.NODE_OPTIONS);
  if (missing.length === 0) return false;
  const child = spawn(o.execPath, [...o.execArgv, ...missing, ...o.argv], {
    env: { ...o.env, [RELAUNCHED_ENV]: '1' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    detached: true,
  });
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  for (const s of FORWARDED) process.on(s, forward);
  child.once('error', (err) => {
    process.stderr.write(`sluice: could not start ${o.execPath}: ${err.message}\n`);
    process.exit(1);
  });
  child.once('exit', (code, signal) => {
    for (const s of FORWARDED) process.off(s, forward);
    if (signal !== null) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
  return true;
}

/** In a relaunched child: die with the parent (see the module comment). */
function watchParent(): void {
  if (!process.channel) return;
  process.channel.unref();
  process.once('disconnect', () => process.kill(process.pid, 'SIGKILL'));
}
