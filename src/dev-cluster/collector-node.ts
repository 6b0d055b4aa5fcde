import { missingMemoryFlags } from '../runtime/memory-flags';
import { httpGet, pollUntil } from './http-probe';
import { describeExit, ManagedProcess, type ExitStatus, type OutputListener } from './processes';

export interface CollectorNodeOptions {
  /** HAProxy server name, e.g. `collector1`. */
  readonly name: string;
  /** Node binary that runs the CLI. */
  readonly node: string;
  /** `dist/src/cli.js`. */
  readonly cli: string;
  /** Loopback port; kept across restarts so HAProxy's server line stays valid. */
  readonly port: number;
  /** Loopback OTLP/HTTP port (SLUICE_OTLP_PORT), kept across restarts likewise. */
  readonly otlpPort: number;
  /** Complete environment of the process (the runner sets SLUICE_HOST, SLUICE_PORT and SLUICE_OTLP_PORT in it). */
  readonly env: NodeJS.ProcessEnv;
  /** Longest wait for `/readyz` to answer 200 after a start (milliseconds). */
  readonly readyTimeoutMs: number;
  /** Longest wait for the exit after SIGTERM before SIGKILL (milliseconds). */
  readonly stopTimeoutMs: number;
  readonly onOutput?: OutputListener;
  /** Called when the process ends without `stop` or `kill` (a crash). */
  readonly onUnexpectedExit?: (name: string, status: ExitStatus) => void;
}

/** One `sluice serve` process (with the memory flags) behind HAProxy; can be stopped, killed and started again. */
export class CollectorNode {
  private process: ManagedProcess | null = null;
  /** Set by `stop` and `kill`: the next exit is the one asked for. */
  private exitRequested = false;

  constructor(private readonly o: CollectorNodeOptions) {}

  get name(): string {
    return this.o.name;
  }

  get port(): number {
    return this.o.port;
  }

  get otlpPort(): number {
    return this.o.otlpPort;
  }

  /** `http://127.0.0.1:<port>`: the collector itself, bypassing HAProxy. */
  get url(): string {
    return `http://127.0.0.1:${this.o.port}`;
  }

  /** Pid of the current process (undefined when not running). */
  get pid(): number | undefined {
    return this.process?.running ? this.process.pid : undefined;
  }

  get running(): boolean {
    return this.process?.running ?? false;
  }

  /** The last lines of the current (or last) process. */
  output(): string {
    return this.process?.output() ?? '';
  }

  /** Starts the process and waits until `/readyz` answers 200. Throws (with its output) if it exits first. */
  async start(): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running`);
    const proc = new ManagedProcess({
      name: this.o.name,
      command: this.o.node,
      // The memory flags on its own command line (unless NODE_OPTIONS sets them): the collector
      // runs as this very process, not relaunched under a parent (see src/runtime/relaunch.ts).
      args: [...missingMemoryFlags([], this.o.env.NODE_OPTIONS), this.o.cli, 'serve'],
      env: this.o.env,
      onOutput: this.o.onOutput,
    });
    this.process = proc;
    this.exitRequested = false;
    void proc.exited.then((status) => {
      if (!this.exitRequested && this.process === proc) this.o.onUnexpectedExit?.(this.name, status);
    });
    try {
      await pollUntil(
        `${this.name} on ${this.url} to be ready`,
        async () => (await httpGet(`${this.url}/readyz`)).status === 200,
        {
          timeoutMs: this.o.readyTimeoutMs,
          abort: () =>
            proc.exitStatus ? `exited (${describeExit(proc.exitStatus)}) before it was ready` : null,
        },
      );
    } catch (err) {
      this.exitRequested = true;
      await proc.stop('SIGKILL');
      throw new Error(`${(err as Error).message}\n${proc.output()}`, { cause: err });
    }
  }

  /** SIGTERM: the collector drains (readiness 503, drain delay, close, flush) and exits. */
  stop(): Promise<ExitStatus> {
    this.exitRequested = true;
    return this.process?.stop('SIGTERM', this.o.stopTimeoutMs) ?? Promise.resolve({ code: 0, signal: null });
  }

  /** SIGKILL: a crash, nothing flushed. */
  kill(): Promise<ExitStatus> {
    this.exitRequested = true;
    const proc = this.process;
    if (!proc) return Promise.resolve({ code: null, signal: 'SIGKILL' });
    proc.signal('SIGKILL');
    return proc.exited;
  }

  /** Drains and stops the process, then starts a new one on the same port; resolves once ready. */
  async restart(): Promise<ExitStatus> {
    const status = await this.stop();
    await this.start();
    return status;
  }
}
