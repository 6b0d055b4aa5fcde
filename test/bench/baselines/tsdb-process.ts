import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';

/** A time-series database started by the bench on loopback, with its data in a temporary folder. */
export interface TsdbProcess {
  readonly pid: number;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** SIGTERM, SIGKILL after 10 s, then the data folder is removed. Idempotent. */
  stop(): Promise<void>;
}

/** Whether `binary` is installed: it runs with `versionArgs` and exits 0. */
export function installed(binary: string, versionArgs: readonly string[]): boolean {
  return spawnSync(binary, versionArgs, { stdio: 'ignore' }).status === 0;
}

/** Status and body of one HTTP request to 127.0.0.1 (status 0 when it got no answer). */
export function httpText(
  port: number,
  method: string,
  pathAndQuery: string,
  timeoutMs = 30_000,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, method, path: pathAndQuery, timeout: timeoutMs },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end();
  });
}

export interface StartTsdbOptions {
  readonly name: string;
  readonly binary: string;
  /** Arguments, given the temporary data folder (written by `prepare` first, if given). */
  readonly args: (dir: string) => readonly string[];
  readonly prepare?: (dir: string) => void;
  readonly port: number;
  /** Ready once `GET <readyPath>` answers `readyStatus`. */
  readonly readyPath: string;
  readonly readyStatus: number;
  /** Longest wait for readiness (milliseconds). Default 30 000. */
  readonly readyTimeoutMs?: number;
}

const live = new Set<ChildProcess>();
// A bench that crashes must not leave a database server behind holding its port.
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export async function startTsdb(o: StartTsdbOptions): Promise<TsdbProcess> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `sluice-bench-${o.name}-`));
  o.prepare?.(dir);
  const child = spawn(o.binary, [...o.args(dir)], { stdio: 'ignore' });
  live.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => live.delete(child));
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopping;
  };
  const deadline = performance.now() + (o.readyTimeoutMs ?? 30_000);
  while ((await httpText(o.port, 'GET', o.readyPath, 2000)).status !== o.readyStatus) {
    if (child.exitCode !== null || child.signalCode !== null || performance.now() > deadline) {
      await stop();
      throw new Error(`${o.name} did not start (${o.binary} ${o.args(dir).join(' ')})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (child.pid === undefined) throw new Error(`${o.name}: no pid`);
  return { pid: child.pid, origin: `http://127.0.0.1:${o.port}`, stop };
}
