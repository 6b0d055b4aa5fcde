import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { requireProgram, searchFolders } from '../../../src/cluster/executables';
import { freePort } from '../../../src/cluster/free-port';
import { httpGet, pollUntil } from '../../../src/cluster/http-probe';
import { ManagedProcess, describeExit } from '../../../src/cluster/processes';

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

export interface RunningPrometheus {
  readonly url: string;
  /** Instant query through the HTTP API (`/api/v1/query`). */
  query(promql: string): Promise<PromSample[]>;
  stop(): Promise<void>;
}

/** The generated prometheus.yml: JSON is YAML, so no YAML writer is needed. */
export function prometheusConfig(jobs: readonly ScrapeJob[], intervalSeconds: number): string {
  return JSON.stringify(
    {
      global: { scrape_interval: `${intervalSeconds}s`, scrape_timeout: `${intervalSeconds}s` },
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

/**
 * A real Prometheus (Debian's `prometheus` package) on a free loopback port, with its own
 * storage folder, scraping `jobs` every `intervalSeconds`.
 */
export async function startPrometheus(
  jobs: readonly ScrapeJob[],
  intervalSeconds = 1,
): Promise<RunningPrometheus> {
  const binary = requireProgram('prometheus', 'prometheus', searchFolders(process.env.PATH));
  const folder = await mkdtemp(path.join(os.tmpdir(), 'sluice-prometheus-'));
  const configFile = path.join(folder, 'prometheus.yml');
  await writeFile(configFile, prometheusConfig(jobs, intervalSeconds));
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
    async query(promql) {
      const res = await httpGet(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`, 5000);
      if (res.status !== 200) throw new Error(`Prometheus answered ${res.status}: ${res.body}`);
      const body = JSON.parse(res.body) as {
        data: {
          resultType: string;
          result: Array<{ metric: Record<string, string>; value: [number, string] }>;
        };
      };
      return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    stop,
  };
}
