import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { COLLECTORS_BACKEND } from './haproxy-config';
import { httpGet, pollUntil } from './http-probe';
import { describeExit, ManagedProcess, type ExitStatus, type OutputListener } from './processes';

/** User and password of HAProxy's stats page. */
export interface StatsCredentials {
  readonly user: string;
  readonly password: string;
}

/** One server row of HAProxy's stats (`/stats;csv`). */
export interface ServerStats {
  readonly name: string;
  /** `UP`, `DOWN`, `MAINT`, `no check`, or a transition such as `UP 1/2`. */
  readonly status: string;
  /** Sessions sent to the server since HAProxy started. */
  readonly sessions: number;
  /** 2xx / 5xx answers the server gave. */
  readonly responses2xx: number;
  readonly responses5xx: number;
  /** Retries (`wretr`) and redispatches (`wredis`) off this server. */
  readonly retries: number;
  readonly redispatches: number;
}

export interface HaproxyProcessOptions {
  /** The haproxy binary. */
  readonly binary: string;
  /** Folder the generated config is written to. */
  readonly folder: string;
  /** The generated config text. */
  readonly config: string;
  /** Where the stats frontend listens, e.g. `http://127.0.0.1:8404`. */
  readonly statsOrigin: string;
  /** Credentials of the stats page (the config reads them from SLUICE_STATS_USER / _PASSWORD in `env`). */
  readonly statsCredentials: StatsCredentials;
  /** Where the Prometheus exporter frontend listens, e.g. `http://127.0.0.1:8405`. */
  readonly exporterOrigin: string;
  readonly env: NodeJS.ProcessEnv;
  /** Longest wait for the stats page after start (milliseconds). */
  readonly readyTimeoutMs: number;
  readonly onOutput?: OutputListener;
}

function execFileText(file: string, args: readonly string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ ok: boolean; output: string }>((resolve) => {
    execFile(file, [...args], { env, timeout: 10_000 }, (err, stdout, stderr) => {
      resolve({ ok: err === null, output: `${stdout}${stderr}`.trim() });
    });
  });
}

/** Parses `/stats;csv` into the server rows of the collectors backend. */
export function parseServerStats(csv: string): ServerStats[] {
  const [header, ...rows] = csv.split('\n');
  const columns = (header ?? '').replace(/^# /, '').split(',');
  const at = (name: string): number => columns.indexOf(name);
  const [px, sv, status, stot, h2, h5, wretr, wredis] = [
    'pxname',
    'svname',
    'status',
    'stot',
    'hrsp_2xx',
    'hrsp_5xx',
    'wretr',
    'wredis',
  ].map(at) as [number, number, number, number, number, number, number, number];
  const out: ServerStats[] = [];
  for (const row of rows) {
    const f = row.split(',');
    if (f[px] !== COLLECTORS_BACKEND || f[sv] === 'BACKEND' || f[sv] === undefined) continue;
    const num = (i: number): number => Number(f[i] ?? 0) || 0;
    out.push({
      name: f[sv],
      status: f[status] ?? '',
      sessions: num(stot),
      responses2xx: num(h2),
      responses5xx: num(h5),
      retries: num(wretr),
      redispatches: num(wredis),
    });
  }
  return out;
}

/** A real HAProxy, run in the foreground (`-db`) on a generated config. */
export class HaproxyProcess {
  private constructor(
    private readonly process: ManagedProcess,
    /** Path of the generated config. */
    readonly configPath: string,
    private readonly o: HaproxyProcessOptions,
  ) {}

  /** `Authorization` header for the stats page. */
  private get authorization(): Record<string, string> {
    const { user, password } = this.o.statsCredentials;
    return { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
  }

  /** Writes and checks the config (`haproxy -c`), starts HAProxy, waits for its stats page. */
  static async start(o: HaproxyProcessOptions): Promise<HaproxyProcess> {
    const configPath = path.join(o.folder, 'haproxy.cfg');
    await writeFile(configPath, o.config);
    const check = await execFileText(o.binary, ['-c', '-q', '-f', configPath], o.env);
    if (!check.ok) throw new Error(`haproxy -c rejected the generated ${configPath}:\n${check.output}`);
    const proc = new ManagedProcess({
      name: 'haproxy',
      command: o.binary,
      args: ['-db', '-f', configPath],
      env: o.env,
      onOutput: o.onOutput,
    });
    const haproxy = new HaproxyProcess(proc, configPath, o);
    try {
      await pollUntil('HAProxy stats page', async () => (await haproxy.statsPage()).status === 200, {
        timeoutMs: o.readyTimeoutMs,
        abort: () =>
          proc.exitStatus ? `haproxy exited (${describeExit(proc.exitStatus)}):\n${proc.output()}` : null,
      });
    } catch (err) {
      await proc.stop('SIGKILL');
      throw err;
    }
    return haproxy;
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  get exited(): Promise<ExitStatus> {
    return this.process.exited;
  }

  get running(): boolean {
    return this.process.running;
  }

  /** The human stats page (behind credentials). */
  get statsUrl(): string {
    return `${this.o.statsOrigin}/stats`;
  }

  /** HAProxy's Prometheus exporter. */
  get metricsUrl(): string {
    return `${this.o.exporterOrigin}/metrics`;
  }

  /** The stats page fetched with the credentials (`;csv` for the machine-readable form). */
  statsPage(suffix = '', timeoutMs = 1000): Promise<{ status: number; body: string }> {
    return httpGet(`${this.statsUrl}${suffix}`, timeoutMs, this.authorization);
  }

  output(): string {
    return this.process.output();
  }

  /** The collectors backend's servers as HAProxy sees them now. */
  async servers(): Promise<ServerStats[]> {
    const res = await this.statsPage(';csv', 2000);
    if (res.status !== 200) throw new Error(`HAProxy stats answered ${res.status}`);
    return parseServerStats(res.body);
  }

  /**
   * Soft stop (SIGUSR1): HAProxy stops listening and lets requests in flight finish; SIGKILL
   * after `timeoutMs`. Idempotent.
   */
  stop(timeoutMs = 10_000): Promise<ExitStatus> {
    return this.process.stop('SIGUSR1', timeoutMs);
  }

  /** SIGKILL now. */
  kill(): Promise<ExitStatus> {
    this.process.signal('SIGKILL');
    return this.process.exited;
  }
}
