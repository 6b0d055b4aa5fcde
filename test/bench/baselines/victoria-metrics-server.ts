import { freePort } from '../../../src/dev-cluster/free-port';
import { httpText, installed, startTsdb, type TsdbProcess } from './tsdb-process';

/** Debian's `victoria-metrics`, or `BENCH_VICTORIA_METRICS` (as `BENCH_INFLUXD`). */
export const VICTORIA_METRICS = process.env.BENCH_VICTORIA_METRICS ?? '/usr/bin/victoria-metrics';

/** Whether Debian's `victoria-metrics` (single node) is installed. */
export function victoriaMetricsInstalled(): boolean {
  return installed(VICTORIA_METRICS, ['-version']);
}

/**
 * `victoria-metrics` with its defaults, but listening on a free loopback port (8428 by default)
 * with its data in a temporary folder. `-search.latencyOffset=0s` only lets the stored-count query
 * see samples of the last 30 s (its default hides them from queries); ingestion is untouched.
 * Ready once `/health` answers 200.
 */
export async function startVictoriaMetrics(): Promise<TsdbProcess> {
  const port = await freePort();
  return startTsdb({
    name: 'victoria-metrics',
    binary: VICTORIA_METRICS,
    args: (dir) => [
      `-httpListenAddr=127.0.0.1:${port}`,
      `-storageDataPath=${dir}`,
      '-search.latencyOffset=0s',
      '-search.disableCache',
    ],
    port,
    readyPath: '/health',
    readyStatus: 200,
  });
}

/** Its InfluxDB line protocol endpoint (nanosecond timestamps, stored as milliseconds). */
export const VICTORIA_WRITE_PATH = '/write';

/**
 * Samples stored whose metric name ends in `_value` (one a point: VictoriaMetrics stores each
 * numeric field as a series `<measurement>_<field>` and drops string fields), once the in-memory
 * parts are flushed (`/internal/force_flush`).
 */
export async function victoriaStoredPoints(server: TsdbProcess): Promise<number> {
  const port = Number(new URL(server.origin).port);
  await httpText(port, 'GET', '/internal/force_flush');
  const time = Math.ceil(Date.now() / 1000) + 600;
  const q = encodeURIComponent('sum(count_over_time({__name__=~".+_value"}[1h]))');
  const { status, body } = await httpText(port, 'GET', `/api/v1/query?query=${q}&time=${time}`, 120_000);
  if (status !== 200)
    throw new Error(`victoria-metrics: count query answered ${status}: ${body.slice(0, 200)}`);
  const parsed = JSON.parse(body) as { data?: { result?: Array<{ value?: [number, string] }> } };
  return Number(parsed.data?.result?.[0]?.value?.[1] ?? 0);
}
