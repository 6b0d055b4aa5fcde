/**
 * Child processes the cluster runner starts, and the guarantee that it leaves none behind:
 * every child is registered, and the runner's own exit SIGKILLs whatever is still running.
 */
import { spawn, type ChildProcess } from 'node:child_process';

/** How a child ended: its exit code, or the signal that ended it. */
export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** Called with each line a child writes (stdout and stderr alike). */
export type OutputListener = (source: string, line: string) => void;

export interface ManagedProcessOptions {
  /** Shown in errors and passed to `onOutput`, e.g. `collector2`. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly onOutput?: OutputListener;
}

/** Lines kept per process for error messages. */
const KEEP_LINES = 200;

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort (a crash, or process.exit elsewhere): no collector or HAProxy outlives us.
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/** One child process: output kept, exit observed, stop bounded in time. */
export class ManagedProcess {
  readonly name: string;
  /** Resolves once the process has ended (never rejects). */
  readonly exited: Promise<ExitStatus>;
  private readonly child: ChildProcess;
  private readonly lines: string[] = [];
  private status: ExitStatus | null = null;
  private stopping: Promise<ExitStatus> | null = null;

  constructor(o: ManagedProcessOptions) {
    installExitHook();
    this.name = o.name;
    // Own process group (detached): a Ctrl-C in the terminal reaches the runner only, which then
    // stops the children in order (HAProxy first, then the collectors' drain).
    this.child = spawn(o.command, [...o.args], {
      env: o.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    live.add(this.child);
    this.exited = new Promise<ExitStatus>((resolve) => {
      this.child.once('error', (err) => {
        // Without a pid it never ran (ENOENT, EACCES): there will be no 'exit' event.
        if (this.child.pid === undefined) {
          live.delete(this.child);
          this.status = { code: null, signal: null };
          this.keep(`could not start ${o.command}: ${err.message}`, o);
          resolve(this.status);
        }
      });
      this.child.once('exit', (code, signal) => {
        live.delete(this.child);
        this.status = { code, signal };
        resolve(this.status);
      });
    });
    for (const stream of [this.child.stdout, this.child.stderr]) {
      let partial = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        const parts = (partial + chunk).split('\n');
        partial = parts.pop() ?? '';
        for (const line of parts) if (line !== '') this.keep(line, o);
      });
      stream?.on('end', () => {
        if (partial !== '') this.keep(partial, o);
        partial = '';
      });
    }
  }

  private keep(line: string, o: ManagedProcessOptions): void {
    this.lines.push(line);
    if (this.lines.length > KEEP_LINES) this.lines.shift();
    o.onOutput?.(o.name, line);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Null while running. */
  get exitStatus(): ExitStatus | null {
    return this.status;
  }

  get running(): boolean {
    return this.status === null;
  }

  /** The last lines the process wrote. */
  output(): string {
    return this.lines.join('\n');
  }

  /** Sends `signal` if the process still runs. */
  signal(signal: NodeJS.Signals): void {
    if (this.status === null) this.child.kill(signal);
  }

  /**
   * Sends `signal`, waits up to `timeoutMs` for the exit, then SIGKILL. Idempotent: later calls
   * share the first one's result.
   */
  stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000): Promise<ExitStatus> {
    this.stopping ??= (async () => {
      this.signal(signal);
      const timer = setTimeout(() => this.signal('SIGKILL'), timeoutMs);
      const status = await this.exited;
      clearTimeout(timer);
      return status;
    })();
    return this.stopping;
  }
}

/** `code 0`, `signal SIGKILL`… for messages. */
export function describeExit(s: ExitStatus): string {
  return s.signal !== null ? `signal ${s.signal}` : `code ${s.code ?? 'unknown'}`;
}
