import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { requireProgram, searchFolders } from '../../../src/dev-cluster/executables';
import { freePort } from '../../../src/dev-cluster/free-port';
import { httpGet, pollUntil } from '../../../src/dev-cluster/http-probe';
import { ManagedProcess, describeExit } from '../../../src/dev-cluster/processes';

/** One scrape job of the generated config. */
export interface ScrapeJob {
  readonly job: string;
  /** `host:port` of each target. */
  readonly targets: readonly string[];
  readonly metricsPath?: string;
}

/** One series of an instant query. */
export interface PromSample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: number;
}

/** One rule as Prometheus loaded it (`/api/v1/rules`). */
export interface LoadedRule {
  readonly type: 'alerting' | 'recording';
  readonly name: string;
  readonly query: string;
  readonly labels?: Readonly<Record<string, string>>;
  /** `ok`, `err` or `unknown` (not evaluated yet). */
  readonly health: string;
  readonly lastError?: string;
  /** Alerting rules: `inactive`, `pending` or `firing`. */
  readonly state?: string;
  /** Alerting rules: the alerts pending or firing, with their labels. */
  readonly alerts?: ReadonlyArray<{
    readonly labels: Readonly<Record<string, string>>;
    readonly state: string;
  }>;
}

export interface RunningPrometheus {
  readonly url: string;
  /** Instant query through the HTTP API (`/api/v1/query`), at `time` (Unix seconds; default now). */
  query(promql: string, time?: number): Promise<PromSample[]>;
  /** Every rule of the loaded rule files, with its last evaluation. */
  rules(): Promise<LoadedRule[]>;
  /** Names of the metrics its targets expose (from their `# HELP` / `# TYPE` lines, samples or not). */
  metricNames(): Promise<Set<string>>;
  stop(): Promise<void>;
}

export interface PrometheusOptions {
  /** Scrape and rule evaluation interval (seconds). Default 1. */
  readonly intervalSeconds?: number;
  /** Absolute paths of rule files to load. */
  readonly ruleFiles?: readonly string[];
}

/** The generated prometheus.yml: JSON is YAML, so no YAML writer is needed. */
export function prometheusConfig(
  jobs: readonly ScrapeJob[],
  intervalSeconds: number,
  ruleFiles: readonly string[] = [],
): string {
  return JSON.stringify(
    {
      global: {
        scrape_interval: `${intervalSeconds}s`,
        scrape_timeout: `${intervalSeconds}s`,
        evaluation_interval: `${intervalSeconds}s`,
      },
      rule_files: ruleFiles,
      scrape_configs: jobs.map((j) => ({
        job_name: j.job,
        metrics_path: j.metricsPath ?? '/metrics',
        static_configs: [{ targets: j.targets }],
      })),
    },
    null,
    2,
  );
}

async function getJson<T>(url: string): Promise<T> {
  const res = await httpGet(url, 5000);
  if (res.status !== 200) throw new Error(`Prometheus answered ${res.status}: ${res.body}`);
  return (JSON.parse(res.body) as { data: T }).data;
}

/**
 * A real Prometheus (Debian's `prometheus` package) on a free loopback port, with its own
 * storage folder, scraping `jobs` and evaluating `ruleFiles` every `intervalSeconds` (default 1).
 */
export async function startPrometheus(
  jobs: readonly ScrapeJob[],
  o: PrometheusOptions = {},
): Promise<RunningPrometheus> {
  const intervalSeconds = o.intervalSeconds ?? 1;
  const binary = requireProgram('prometheus', 'prometheus', searchFolders(process.env.PATH));
  const folder = await mkdtemp(path.join(os.tmpdir(), 'sluice-prometheus-'));
  const configFile = path.join(folder, 'prometheus.yml');
  await writeFile(configFile, prometheusConfig(jobs, intervalSeconds, o.ruleFiles));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = new ManagedProcess({
    name: 'prometheus',
    command: binary,
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${path.join(folder, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--storage.tsdb.retention.time=1h',
      '--log.level=warn',
    ],
    env: { PATH: process.env.PATH ?? '', HOME: folder },
  });
  const stop = async (): Promise<void> => {
    await proc.stop('SIGTERM', 10_000);
    await rm(folder, { recursive: true, force: true });
  };
  try {
    await pollUntil('Prometheus to be ready', async () => (await httpGet(`${url}/-/ready`)).status === 200, {
      timeoutMs: 30_000,
      abort: () => (proc.exitStatus ? `exited (${describeExit(proc.exitStatus)}):\n${proc.output()}` : null),
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    async query(promql, time) {
      const at = time === undefined ? '' : `&time=${time}`;
      const data = await getJson<{
        result: Array<{ metric: Record<string, string>; value: [number, string] }>;
      }>(`${url}/api/v1/query?query=${encodeURIComponent(promql)}${at}`);
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async rules() {
      const data = await getJson<{ groups: Array<{ rules: LoadedRule[] }> }>(`${url}/api/v1/rules`);
      return data.groups.flatMap((g) => g.rules);
    },
    async metricNames() {
      return new Set(Object.keys(await getJson<Record<string, unknown>>(`${url}/api/v1/metadata`)));
    },
    stop,
  };
}
