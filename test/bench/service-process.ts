import { spawn, type ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import { sampleProcess, type ProcSample } from './proc-stats';

/** How a run ended: the child's exit code, or the signal that ended it. */
export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A server process under test: a collector or a baseline. */
export interface ServiceProcess {
  readonly name: string;
  readonly pid: number;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** CPU and memory of the process now; throws once it has exited. */
  sample(): ProcSample;
  /** SIGTERM, then waits for the exit; SIGKILL after `timeoutMs`. Idempotent. */
  stop(timeoutMs?: number): Promise<ExitStatus>;
  /** The last lines the process wrote (stdout and stderr), for error messages. */
  output(): string;
}

export interface StartServiceOptions {
  readonly name: string;
  /** Script run by this Node binary. */
  readonly script: string;
  readonly args?: readonly string[];
  /** Node flags before the script, e.g. `--cpu-prof`. */
  readonly nodeArgs?: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly port: number;
  /** Longest wait for `GET /readyz` to answer 200 (milliseconds). Default 30 000. */
  readonly readyTimeoutMs?: number;
}

const OUTPUT_KEEP_CHARS = 8192;
const live = new Set<ChildProcess>();

// A bench that crashes must not leave servers behind holding ports and database connections.
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

function readyzStatus(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/readyz', timeout: 1000, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

/** Spawns the process and resolves once `GET /readyz` answers 200; rejects (with its output) if it exits first. */
export async function startService(o: StartServiceOptions): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...(o.nodeArgs ?? []), o.script, ...(o.args ?? [])], {
    env: o.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEEP_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${o.name}: could not spawn ${o.script}`);

  const deadline = Date.now() + (o.readyTimeoutMs ?? 30_000);
  for (;;) {
    if (hasExited) {
      const status = await exited;
      throw new Error(`${o.name} exited before it was ready (${JSON.stringify(status)}):\n${output}`);
    }
    if ((await readyzStatus(o.port)) === 200) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${o.name} not ready after ${o.readyTimeoutMs ?? 30_000} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  let stopping: Promise<ExitStatus> | null = null;
  return {
    name: o.name,
    pid,
    origin: `http://127.0.0.1:${o.port}`,
    sample: () => sampleProcess(pid),
    output: () => output,
    stop(timeoutMs = 30_000): Promise<ExitStatus> {
      stopping ??= (async () => {
        if (!hasExited) child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
        const status = await exited;
        clearTimeout(timer);
        return status;
      })();
      return stopping;
    },
  };
}
