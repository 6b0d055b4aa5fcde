import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../../src/dev-cluster/free-port';
import { httpText, installed, startTsdb, type TsdbProcess } from './tsdb-process';

/** Debian's `influxd`, or `BENCH_INFLUXD` (another build, or a missing path to see the suite skip it). */
export const INFLUXD = process.env.BENCH_INFLUXD ?? '/usr/bin/influxd';

/** Whether Debian's `influxdb` (1.x) is installed. */
export function influxdInstalled(): boolean {
  return installed(INFLUXD, ['version']);
}

/**
 * Debian's configuration of `influxdb` (/etc/influxdb/influxdb.conf: the built-in defaults with
 * usage reporting off) with only what running it beside other servers needs: its folders in a
 * temporary one, and both listeners (the HTTP API and the backup RPC port, 8086 and 8088 by
 * default) on free loopback ports. Everything else is the default a user gets: the WAL fsynced
 * before each write is answered (`wal-fsync-delay = "0s"`), a 1 GiB cache snapshotted to TSM at 25
 * MiB, the `inmem` series index, the HTTP access log on, and the `_internal` monitor database
 * written every 10 s.
 */
function config(dir: string, httpPort: number, rpcPort: number): string {
  return `reporting-enabled = false
bind-address = "127.0.0.1:${rpcPort}"
[meta]
  dir = "${dir}/meta"
[data]
  dir = "${dir}/data"
  wal-dir = "${dir}/wal"
[http]
  bind-address = "127.0.0.1:${httpPort}"
`;
}

/** `influxd` on loopback with a database `bench`; ready once `/ping` answers 204. */
export async function startInfluxd(): Promise<TsdbProcess> {
  const port = await freePort();
  const rpc = await freePort();
  const server = await startTsdb({
    name: 'influxd',
    binary: INFLUXD,
    prepare: (dir) => writeFileSync(path.join(dir, 'influxdb.conf'), config(dir, port, rpc)),
    args: (dir) => ['-config', path.join(dir, 'influxdb.conf')],
    port,
    readyPath: '/ping',
    readyStatus: 204,
  });
  if ((await httpText(port, 'POST', '/query?q=CREATE%20DATABASE%20bench')).status !== 200) {
    await server.stop();
    throw new Error('influxd: CREATE DATABASE bench failed');
  }
  return server;
}

/** The line protocol write path of `startInfluxd`'s database (nanosecond timestamps). */
export const INFLUX_WRITE_PATH = '/write?db=bench&precision=ns';

/** Values of field `value` stored in the database, over every measurement. */
export async function influxStoredPoints(server: TsdbProcess): Promise<number> {
  const port = Number(new URL(server.origin).port);
  const q = encodeURIComponent('SELECT count(value) FROM /.*/');
  const { status, body } = await httpText(port, 'GET', `/query?db=bench&q=${q}`, 120_000);
  if (status !== 200) throw new Error(`influxd: count query answered ${status}`);
  const parsed = JSON.parse(body) as {
    results?: Array<{ series?: Array<{ values?: Array<[string, number]> }> }>;
  };
  let total = 0;
  for (const s of parsed.results?.[0]?.series ?? []) total += s.values?.[0]?.[1] ?? 0;
  return total;
}
