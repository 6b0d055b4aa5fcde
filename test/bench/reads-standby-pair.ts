/**
 * A primary and a streaming-replication standby holding the `reads` suite's data set, for its
 * readers on a standby. The machine's PostgreSQL is not made a replication primary (that would
 * change its pg_hba.conf): the bench runs a primary cluster of its own, kept stopped between runs in
 * a folder named after the data set (`~/.cache/sluice-bench/<data set>` of the user the cluster runs
 * as; `BENCH_READS_PRIMARY_DIR` names another), whose database is reused as kept-database.ts says.
 * The standby is made from it by `pg_basebackup` every run and removed after. Both clusters are
 * stopped when the bench exits, fails or is interrupted; only the primary's folder stays.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  startPostgresStandby,
  startPrivatePrimary,
  type PostgresStandby,
  type PrivatePrimary,
} from '../support/postgres-standby';
import { datasetDatabaseName, type ReadsDataset } from './reads-dataset';
import { datasetDatabase, type DatasetDatabase } from './reads-kept-load';

/** `shared_buffers` of both clusters: PostgreSQL's default, as the machine's cluster has it. */
const SHARED_BUFFERS = '128MB';
/** Longest wait for the standby to replay up to the primary's WAL position after it starts (milliseconds). */
const CATCH_UP_MS = 120_000;

export interface StandbyPair extends DatasetDatabase {
  /** URL of the data set's database on the standby. */
  readonly standbyUrl: string;
  /** The kept primary's folder. */
  readonly primaryFolder: string;
  /** Seconds `pg_basebackup` and the standby's start took. */
  readonly standbySeconds: number;
  /** Removes the standby, stops the primary (its folder stays). */
  close(): Promise<void>;
}

/** Synchronous stops of the clusters now running, for the process's exit. */
const running = new Set<() => void>();
let hooked = false;

function stopAllNow(): void {
  for (const stop of [...running].reverse()) stop();
  running.clear();
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  // `exit` runs on a normal end, on an uncaught error and after run.ts's SIGINT handler exits;
  // a terminating signal exits the same way (the default would skip `exit` handlers).
  process.on('exit', stopAllNow);
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) process.once(signal, () => process.exit(143));
}

/** `~/.cache/sluice-bench` of the user the cluster runs as (`postgres` when the bench runs as root). */
function cacheRoot(): string {
  const given = process.env.BENCH_READS_PRIMARY_DIR;
  if (given !== undefined && given !== '') return given;
  if (process.getuid?.() !== 0) return path.join(os.homedir(), '.cache', 'sluice-bench');
  const home = execFileSync('getent', ['passwd', 'postgres'], { encoding: 'utf8' }).split(':')[5];
  if (home === undefined || home === '') throw new Error('no home folder for the postgres user');
  return path.join(home, '.cache', 'sluice-bench');
}

async function scalar(url: string, sql: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ v: string | null }>(sql);
    return rows[0]?.v ?? null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Waits until the standby has replayed the primary's WAL position of now. */
async function caughtUp(primaryUrl: string, standbyUrl: string): Promise<void> {
  const target = await scalar(primaryUrl, 'SELECT pg_current_wal_lsn()::text AS v');
  const deadline = Date.now() + CATCH_UP_MS;
  for (;;) {
    const behind = await scalar(
      standbyUrl,
      `SELECT pg_wal_lsn_diff('${target}', pg_last_wal_replay_lsn())::text AS v`,
    ).catch(() => null);
    if (behind !== null && Number(behind) <= 0) return;
    if (Date.now() > deadline)
      throw new Error(`the standby did not replay up to ${target} in ${CATCH_UP_MS} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Starts the kept primary (made and loaded with `d` when missing or stale), makes a standby of it
 * and waits until it has replayed everything. `loadMaxMs` bounds a load.
 */
export async function startStandbyPair(
  d: ReadsDataset,
  loadMaxMs: number,
  progress: (message: string) => void,
): Promise<StandbyPair> {
  hookExit();
  const root = cacheRoot();
  mkdirSync(root, { recursive: true });
  const folder = path.join(root, datasetDatabaseName(d));
  progress(`reads, standby: ${existsSync(folder) ? 'starting the kept' : 'making a'} primary in ${folder}`);
  const primary: PrivatePrimary = await startPrivatePrimary({ folder, sharedBuffers: SHARED_BUFFERS });
  running.add(primary.stopNow);
  let standby: PostgresStandby | null = null;
  const standbyFolder = path.join(root, `standby-${process.pid}`);
  // Registered before the copy starts, so that an interrupted copy is removed too.
  const removeFolder = (): void => rmSync(standbyFolder, { recursive: true, force: true });
  const close = async (): Promise<void> => {
    if (standby !== null) {
      running.delete(standby.removeNow);
      await standby.remove();
    }
    running.delete(removeFolder);
    removeFolder();
    running.delete(primary.stopNow);
    await primary.stop();
  };
  try {
    const db = await datasetDatabase(primary.url, d, loadMaxMs, progress);
    progress('reads, standby: pg_basebackup of the primary');
    const t0 = performance.now();
    running.add(removeFolder);
    standby = await startPostgresStandby(primary.url, {
      folder: standbyFolder,
      sharedBuffers: SHARED_BUFFERS,
    });
    running.add(standby.removeNow);
    await caughtUp(primary.url, standby.urlOf('postgres'));
    const standbySeconds = (performance.now() - t0) / 1000;
    progress(`reads, standby: up and caught up in ${Math.round(standbySeconds)} s`);
    return {
      ...db,
      standbyUrl: standby.urlOf(new URL(db.url).pathname.slice(1)),
      primaryFolder: folder,
      standbySeconds,
      close,
    };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
