import type { BenchOptions } from './bench-options';
import type { TsdbProcess } from './baselines/tsdb-process';
import { createHttpClient } from './http-client';
import { runClosedLoop } from './load-closed';
import { statusCount } from './load-result';
import { POINTS_PER_REQUEST } from './metric-points';
import { sampleProcess } from './proc-stats';
import type { RequestBody } from './workload';

/** Connections of the one load client, every server alike (the load shape). */
export const CONNECTIONS = 16;

/** One server's measured window. */
export interface ServerWindow {
  /** Points stored per second of the window. */
  readonly pointsPerSecond: number;
  /** Server CPU (user + system) in the window per million points stored in it (seconds). */
  readonly cpuSecondsPerMillion: number;
  /** Points stored in the window. */
  readonly points: number;
  /** Server CPU per second of the window: how much of the two cores it got. */
  readonly serverCores: number;
  /** The load client's CPU per second of the window: whether it, not the server, was the limit. */
  readonly clientCores: number;
  /** Points the server took in warm-up and window together (what a stored count should find). */
  readonly acknowledged: number;
}

export interface LineWindowOptions {
  readonly options: BenchOptions;
  /** The server's process (its CPU is read from /proc) and address. */
  readonly server: Pick<TsdbProcess, 'pid' | 'origin'>;
  readonly writePath: string;
  readonly bodies: readonly RequestBody[];
  readonly recycle: (body: RequestBody, cycle: number) => void;
  /** The status of a write taken (204 for both InfluxDB and VictoriaMetrics). */
  readonly okStatus: number;
  /** The bodies' `Content-Type`; default `text/plain` (line protocol). */
  readonly contentType?: string;
}

/**
 * A server that answers each write at once (a line-protocol database, or a floor that stores
 * nothing) under the closed loop: `tsdbWarmupMs` of load, then a `tsdbWindowMs`
 * window with the same connections, continuing with the next points. Only the window is measured:
 * its answered writes, and the server's CPU (its whole process, every thread, from /proc) from its
 * first request to its last answer.
 */
export async function measureLineWindow(o: LineWindowOptions): Promise<ServerWindow> {
  const client = createHttpClient(o.server.origin, CONNECTIONS, o.contentType ?? 'text/plain');
  try {
    const loop = {
      client,
      path: o.writePath,
      bodies: o.bodies,
      concurrency: CONNECTIONS,
      recycle: o.recycle,
    };
    const warm = await runClosedLoop({ ...loop, maxMs: o.options.tsdbWarmupMs });
    const cpu0 = sampleProcess(o.server.pid).cpuSeconds;
    const client0 = process.cpuUsage();
    const load = await runClosedLoop({
      ...loop,
      maxMs: o.options.tsdbWindowMs,
      firstRequest: warm.nextRequest,
    });
    const cpu = sampleProcess(o.server.pid).cpuSeconds - cpu0;
    const clientUsage = process.cpuUsage(client0);
    if (load.transportErrors > 0) throw new Error(`${o.writePath}: ${load.firstTransportError ?? ''}`);
    const points = statusCount(load, o.okStatus) * POINTS_PER_REQUEST;
    if (points === 0)
      throw new Error(`${o.writePath}: no write answered ${o.okStatus}: ${JSON.stringify(load.byStatus)}`);
    const seconds = (load.endedAt - load.startedAt) / 1000;
    return {
      pointsPerSecond: points / seconds,
      cpuSecondsPerMillion: (cpu / points) * 1e6,
      points,
      serverCores: cpu / seconds,
      clientCores: (clientUsage.user + clientUsage.system) / 1e6 / seconds,
      acknowledged: points + statusCount(warm, o.okStatus) * POINTS_PER_REQUEST,
    };
  } finally {
    await client.close();
  }
}
