import { appendFile, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/dev-cluster/free-port';
import { adminUrl } from './postgres';
import { runCommand, type CommandRun } from './run-command';

/** A streaming-replication standby of the test primary: its own cluster, port and temp folder. */
export interface PostgresStandby {
  readonly port: number;
  /** URL of `database` on the standby (replicated from the primary's database of that name). */
  urlOf(database: string): string;
  /** Stops the server (fast shutdown); `start` starts it again. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Runs SQL on the standby (`pg_wal_replay_pause()`, …) through psql. */
  sql(text: string): Promise<string>;
  /** Stops the server if it runs and removes its folder. */
  remove(): Promise<void>;
  /** `remove` done synchronously (immediate shutdown), for a process's `exit` handler. */
  removeNow(): void;
}

/** Settings of a cluster these helpers start. */
export interface ClusterOptions {
  /** `shared_buffers`, e.g. `128MB` (PostgreSQL's default). Default `16MB`: a test's cluster is small. */
  readonly sharedBuffers?: string;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const dir = versions.map((v) => path.join(root, v, 'bin')).find((d) => existsSync(path.join(d, 'pg_ctl')));
  if (dir === undefined)
    throw new Error(`no PostgreSQL server binaries under ${root} (apt-get install postgresql)`);
  return dir;
}

/** PostgreSQL refuses to run as root: the cluster then belongs to, and runs as, `postgres`. */
const asRoot = process.getuid?.() === 0;

function run(command: string, args: readonly string[], cwd: string): Promise<CommandRun> {
  return asRoot
    ? runCommand('runuser', ['-u', 'postgres', '--', command, ...args], cwd)
    : runCommand(command, args, cwd);
}

async function must(what: string, pending: Promise<CommandRun>): Promise<string> {
  const r = await pending;
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

/** A primary of the test's own: `initdb` in a temp folder, on its own port, replication allowed. */
export interface PrivatePrimary {
  /** Admin URL (its `postgres` database). */
  readonly url: string;
  /** URL of `database` on it. */
  urlOf(database: string): string;
  /** The cluster's folder (its data directory is `data` in it). */
  readonly folder: string;
  /** Stops the server (fast shutdown) and keeps its folder. */
  stop(): Promise<void>;
  /** `stop` done synchronously, for a process's `exit` handler; nothing when it is not running. */
  stopNow(): void;
  /** Stops the server and removes its folder. */
  remove(): Promise<void>;
}

export interface PrivatePrimaryOptions extends ClusterOptions {
  /**
   * A folder kept between runs: its cluster is started again when it holds one (on a free port of
   * this run), made there when it does not. Default: a new temp folder.
   */
  readonly folder?: string;
}

/**
 * Starts a primary of the test's own, so a standby can be made from it whatever the machine's
 * PostgreSQL allows (its pg_hba.conf need not allow replication) and its base backup copies only
 * what the test made.
 */
export async function startPrivatePrimary(o: PrivatePrimaryOptions = {}): Promise<PrivatePrimary> {
  const bin = binDir();
  const dir = o.folder ?? (await mkdtemp(path.join(os.tmpdir(), 'sluice-primary-')));
  const data = path.join(dir, 'data');
  const port = await freePort();
  const server = serverOf(bin, dir, data, port);
  const urlOf = (database: string): string => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const primary: PrivatePrimary = {
    url: urlOf('postgres'),
    urlOf,
    folder: dir,
    stop: () => server.stop(),
    stopNow: () => server.stopNow('fast'),
    remove: () => server.remove(),
  };
  if (o.folder === undefined || !existsSync(path.join(data, 'PG_VERSION'))) {
    await initPrimary(bin, dir, data, o);
  }
  try {
    await server.start();
  } catch (err) {
    // A kept cluster stays for the next try; a temp one goes.
    if (o.folder === undefined) await server.remove();
    throw err;
  }
  return primary;
}

/** `initdb` of a primary in `dir` (created when missing), replication allowed from 127.0.0.1. */
async function initPrimary(bin: string, dir: string, data: string, o: ClusterOptions): Promise<void> {
  await mkdir(dir, { recursive: true });
  if (asRoot) await chown(dir, ...(await postgresIds()));
  const initdb = await run(
    path.join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'],
    dir,
  );
  if (initdb.code !== 0) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (exit ${initdb.code}): ${initdb.stderr.trim()}`);
  }
  // Appended to initdb's postgresql.conf, which a standby's copy replaces with its own (settings
  // in postgresql.auto.conf would be copied and win over the standby's). The port is given at
  // each start (`serverOf`), so a kept cluster takes a free one every run.
  await appendFile(
    path.join(data, 'postgresql.conf'),
    [
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'wal_level = replica',
      'max_wal_senders = 4',
      'fsync = off',
      `shared_buffers = ${o.sharedBuffers ?? DEFAULT_SHARED_BUFFERS}`,
      '',
    ].join('\n'),
  );
  await writeOwned(
    path.join(data, 'pg_hba.conf'),
    'local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n',
  );
}

const DEFAULT_SHARED_BUFFERS = '16MB';

export interface StandbyOptions extends ClusterOptions {
  /** The standby's folder, made here (it must not exist); removed by `remove`. Default: a new temp folder. */
  readonly folder?: string;
}

/**
 * Makes a standby with `pg_basebackup` from the primary at `primaryUrl` (default `adminUrl()`) and
 * starts it. The primary's pg_hba.conf must allow replication connections of its user from
 * 127.0.0.1; when it does not, this fails saying the line to add.
 */
export async function startPostgresStandby(
  primaryUrl: string = adminUrl(),
  o: StandbyOptions = {},
): Promise<PostgresStandby> {
  const bin = binDir();
  const primary = new URL(primaryUrl);
  const dir = o.folder ?? (await mkdtemp(path.join(os.tmpdir(), 'sluice-standby-')));
  if (o.folder !== undefined) await mkdir(dir, { recursive: false });
  if (asRoot) await chown(dir, ...(await postgresIds()));
  const data = path.join(dir, 'data');
  const port = await freePort();
  const user = decodeURIComponent(primary.username || 'postgres');
  const backup = await run(
    path.join(bin, 'pg_basebackup'),
    [
      '-h',
      primary.hostname,
      '-p',
      primary.port || '5432',
      '-U',
      user,
      '-D',
      data,
      '-X',
      'stream',
      '-R',
      '-c',
      'fast',
    ],
    dir,
  );
  if (backup.code !== 0) {
    await rm(dir, { recursive: true, force: true });
    const hint = /no pg_hba.conf entry for replication/.test(backup.stderr)
      ? ` Allow replication connections on the primary: add "host replication ${user} 127.0.0.1/32 trust" to its pg_hba.conf (SHOW hba_file) and run SELECT pg_reload_conf().`
      : '';
    throw new Error(`pg_basebackup from ${primary.host} failed: ${backup.stderr.trim()}.${hint}`);
  }
  // The Debian primary keeps its configuration in /etc: the copy gets a small one of its own.
  const conf = [
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${dir}'`,
    'hot_standby = on',
    'fsync = off',
    `shared_buffers = ${o.sharedBuffers ?? DEFAULT_SHARED_BUFFERS}`,
    '',
  ].join('\n');
  await writeOwned(path.join(data, 'postgresql.conf'), conf);
  await writeOwned(path.join(data, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n');
  await writeOwned(path.join(data, 'pg_ident.conf'), '');
  const server = serverOf(bin, dir, data, port);
  const standby: PostgresStandby = {
    port,
    urlOf: (database) => `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`,
    start: () => server.start(),
    stop: () => server.stop(),
    sql: (text) =>
      must(
        'psql',
        runCommand(
          path.join(bin, 'psql'),
          ['-h', '127.0.0.1', '-p', String(port), '-U', user, '-d', 'postgres', '-Atc', text],
          dir,
        ),
      ),
    remove: () => server.remove(),
    removeNow: () => server.removeNow(),
  };
  try {
    await standby.start();
  } catch (err) {
    await standby.remove();
    throw err;
  }
  return standby;
}

async function postgresIds(): Promise<[number, number]> {
  const id = await runCommand('id', ['postgres'], os.tmpdir());
  const uid = /uid=(\d+)/.exec(id.stdout)?.[1];
  const gid = /gid=(\d+)/.exec(id.stdout)?.[1];
  if (uid === undefined || gid === undefined)
    throw new Error('running as root needs a postgres user to run the standby as');
  return [Number(uid), Number(gid)];
}

/** A cluster's server on `port`: pg_ctl start and stop, and its removal with its folder. */
function serverOf(bin: string, dir: string, data: string, port: number) {
  const pgCtl = path.join(bin, 'pg_ctl');
  const log = path.join(dir, 'server.log');
  let running = false;
  const stopNow = (mode: 'fast' | 'immediate'): void => {
    if (!running) return;
    running = false;
    const args = [pgCtl, '-D', data, '-m', mode, '-w', 'stop'];
    try {
      if (asRoot) execFileSync('runuser', ['-u', 'postgres', '--', ...args], { stdio: 'ignore' });
      else execFileSync(args[0] as string, args.slice(1), { stdio: 'ignore' });
    } catch {
      // Already stopped: nothing to do.
    }
  };
  return {
    async start(): Promise<void> {
      await must(
        'pg_ctl start',
        run(pgCtl, ['-D', data, '-l', log, '-o', `-p ${port}`, '-w', '-t', '60', 'start'], dir),
      );
      running = true;
    },
    async stop(): Promise<void> {
      await must('pg_ctl stop', run(pgCtl, ['-D', data, '-m', 'fast', '-w', 'stop'], dir));
      running = false;
    },
    async remove(): Promise<void> {
      if (running) await run(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop'], dir);
      running = false;
      await rm(dir, { recursive: true, force: true });
    },
    stopNow,
    removeNow(): void {
      stopNow('immediate');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Writes a file of a cluster's folder, owned by `postgres` when the test runs as root. */
async function writeOwned(file: string, text: string): Promise<void> {
  await writeFile(file, text);
  if (asRoot) await chown(file, ...(await postgresIds()));
}
