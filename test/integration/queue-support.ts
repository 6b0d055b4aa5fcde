/**
 * Helpers of the tier-4 tests (test/integration/queue-*.test.ts): unique stream names on the
 * shared NATS, `sluice worker` processes, a private nats-server for the tests that stop it, and
 * reads of PostgreSQL and Prometheus text.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { decodeEvents } from '../../src/jetstream/event-codec';
import { freePort, type CollectorProcess } from '../support/collector-process';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { waitFor } from '../support/http';
import { reachable } from '../support/services';
import { storedCounts } from '../support/pg-client';
import { spawnSluice, waitUntilReady, type SluiceProcess } from '../support/sluice-process';
import { NATS_SERVER_BIN, startNatsCluster, type NatsCluster } from '../support/nats-cluster';

export function sharedNatsUrl(): string {
  return process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
}

/** A stream and subject prefix of this test alone, and a management connection to clean up with. */
export interface TestQueue {
  readonly stream: string;
  readonly prefix: string;
  /** `SLUICE_NATS_*` variables naming them, for collectors and workers. */
  readonly env: Record<string, string>;
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  /** Messages the stream holds now (0 when it does not exist). */
  streamMessages(): Promise<number>;
  /** Ids of the events in the messages the stream holds now, one entry per occurrence. */
  heldEventIds(): Promise<string[]>;
  /** Deletes the stream and its dead-letter stream, then closes the connection. */
  cleanup(): Promise<void>;
}

export async function createTestQueue(label: string, natsUrl = sharedNatsUrl()): Promise<TestQueue> {
  const suffix = `${process.pid}_${randomBytes(4).toString('hex')}`;
  const stream = `SLUICE_T_${label.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_${suffix}`;
  const prefix = `sluice-t.${label.replace(/[^a-z0-9]+/gi, '-')}.${suffix}`;
  const nc = await connect({
    servers: natsUrl,
    timeout: 3000,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 200,
  });
  const jsm = await jetstreamManager(nc, { timeout: 3000 });
  return {
    stream,
    prefix,
    env: { SLUICE_NATS_URL: natsUrl, SLUICE_NATS_STREAM: stream, SLUICE_NATS_SUBJECT_PREFIX: prefix },
    nc,
    jsm,
    async streamMessages() {
      const info = await jsm.streams.info(stream).catch(() => null);
      return info?.state.messages ?? 0;
    },
    async heldEventIds() {
      const info = await jsm.streams.info(stream);
      const ids: string[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
        const m = await jsm.streams.getMessage(stream, { seq }).catch(() => null);
        if (m === null) continue; // acked (work-queue retention removes it)
        for (const event of decodeEvents(m.data) ?? []) if (event !== null) ids.push(event.id);
      }
      return ids;
    },
    async cleanup() {
      for (const name of [stream, `${stream}_DEAD`]) await jsm.streams.delete(name).catch(() => undefined);
      await nc.close();
    },
  };
}

/** A `sluice worker` running as its own process (`node dist/src/cli.js worker`). */
export interface WorkerProcess extends SluiceProcess {
  /** Of its /livez, /readyz, /metrics. */
  readonly url: string;
  /** SIGKILL (kill -9): no shutdown sequence at all. */
  kill(): Promise<void>;
}

/** Starts a worker with `env` and waits until its /readyz answers 200 (unless `waitReady` is false). */
export async function startWorkerProcess(
  env: Record<string, string>,
  opts: { waitReady?: boolean } = {},
): Promise<WorkerProcess> {
  const port = await freePort();
  // PostgreSQL: the merge job removes a resent metric sample's copy at once (see in-process.ts).
  const proc = spawnSluice('worker', {
    SLUICE_METRIC_RESEND_WINDOW_MS: '0',
    SLUICE_JOB_MERGE_METRIC_BLOCKS_INTERVAL_MS: '250',
    ...env,
    SLUICE_WORKER_PORT: String(port),
  });
  const url = `http://127.0.0.1:${port}`;
  if (opts.waitReady !== false) await waitUntilReady(proc, 'worker', url, 20_000);
  return {
    ...proc,
    url,
    async kill() {
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGKILL');
      await proc.exited;
    },
  };
}

/** A nats-server of this test alone (for tests that stop it), restartable on the same port and store. */
export interface PrivateNats {
  readonly url: string;
  /** SIGKILL: the server vanishes as in a crash. */
  stop(): Promise<void>;
  /** Starts it again on the same port and store directory. */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: the socket stays open and nothing is answered (a hung server). */
  freeze(): void;
  thaw(): void;
  /** Stops it and deletes its store. */
  destroy(): Promise<void>;
}

export async function startPrivateNats(): Promise<PrivateNats> {
  const port = await freePort();
  const storeDir = mkdtempSync(path.join(os.tmpdir(), 'sluice-t-nats-'));
  const url = `nats://127.0.0.1:${port}`;
  let child: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    const c = spawn(NATS_SERVER_BIN, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], {
      stdio: 'ignore',
    });
    child = c;
    const failed = new Promise<never>((_, reject) =>
      c.once('error', (err) =>
        reject(new Error(`cannot start ${NATS_SERVER_BIN} (${err.message}); apt-get install -y nats-server`)),
      ),
    );
    await Promise.race([waitFor(`nats-server on ${port}`, () => reachable(url, 200), 10_000), failed]);
  };
  const stop = async (): Promise<void> => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGCONT');
    c.kill('SIGKILL');
    await gone;
  };
  await start();
  return {
    url,
    stop,
    start,
    freeze: () => child?.kill('SIGSTOP'),
    thaw: () => child?.kill('SIGCONT'),
    async destroy() {
      await stop();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

/**
 * Where each of `ids` is while nobody consumes: stored once in PostgreSQL, or held in the stream,
 * exactly one of the two. Returns a description of what is wrong, or null.
 */
export async function storedOrHeldOnce(
  dbUrl: string,
  q: TestQueue,
  ids: readonly string[],
): Promise<string | null> {
  const counts = await storedCounts(dbUrl, ids);
  const held = new Map<string, number>();
  for (const id of await q.heldEventIds()) held.set(id, (held.get(id) ?? 0) + 1);
  const problems = { lost: 0, storedTwice: 0, heldTwice: 0, storedAndHeld: 0 };
  for (const id of ids) {
    const s = counts.get(id) ?? 0;
    const h = held.get(id) ?? 0;
    if (s === 0 && h === 0) problems.lost++;
    if (s > 1) problems.storedTwice++;
    if (h > 1) problems.heldTwice++;
    if (s > 0 && h > 0) problems.storedAndHeld++;
  }
  return Object.values(problems).every((n) => n === 0) ? null : JSON.stringify(problems);
}

/** Asserts every id is stored exactly once; returns a description of what is wrong, or null. */
export async function exactlyOnce(dbUrl: string, ids: readonly string[]): Promise<string | null> {
  const counts = await storedCounts(dbUrl, ids);
  const missing = ids.filter((id) => !counts.has(id)).length;
  const twice = [...counts.values()].filter((n) => n > 1).length;
  return missing === 0 && twice === 0 ? null : `${missing} missing, ${twice} stored more than once`;
}

/** The sum of a Prometheus sample over the series whose labels include `labels`. */
export async function metricValue(baseUrl: string, name: string, labels: Record<string, string> = {}) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const l = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

/** What `useQueueFixture` makes for a test file: filled in before its tests run. */
export interface QueueFixture {
  db: TestDatabase;
  q: TestQueue;
  /** Collectors and workers the tests start: stopped after the tests, before the rest is removed. */
  readonly processes: Array<CollectorProcess | WorkerProcess>;
}

/** A database and a stream of the calling test file's own, made before its tests and removed after them. */
export function useQueueFixture(label: string): QueueFixture {
  const fixture = { processes: [] } as unknown as QueueFixture;
  beforeAll(async () => {
    fixture.db = await createTestDatabase(`queue_${label.replace(/[^a-z0-9]+/gi, '_')}`);
    fixture.q = await createTestQueue(label);
  });
  afterAll(async () => {
    await Promise.all(fixture.processes.map((p) => p.stop()));
    await fixture.q?.cleanup();
    await fixture.db?.drop();
  });
  return fixture;
}

/** What `useClusterFixture` makes for a test file: a 3-node JetStream cluster, a database, a client. */
export interface ClusterFixture {
  cluster: NatsCluster;
  db: TestDatabase;
  /** A management connection given every node. */
  jsm: JetStreamManager;
  /** Collectors and workers the tests start: stopped after each test. */
  readonly processes: Array<CollectorProcess | WorkerProcess>;
  /** Names of a stream of the test's own on the cluster, and the `SLUICE_*` variables naming it and the database. */
  stream(label: string): { stream: string; prefix: string; env: Record<string, string> };
}

/**
 * A JetStream cluster of three nats-server processes on loopback and a database, made before the
 * calling file's tests and removed after them (never the shared NATS).
 */
export function useClusterFixture(label: string): ClusterFixture {
  let nc: NatsConnection | undefined;
  const fixture = {
    processes: [],
    stream(name: string) {
      const stream = `SLUICE_T_${name.toUpperCase()}_${randomBytes(4).toString('hex')}`;
      const prefix = `sluice-t.${stream.toLowerCase()}`;
      return {
        stream,
        prefix,
        env: {
          SLUICE_NATS_URL: fixture.cluster.url,
          SLUICE_NATS_STREAM: stream,
          SLUICE_NATS_SUBJECT_PREFIX: prefix,
          SLUICE_DATABASE_URL: fixture.db.url,
        },
      };
    },
  } as unknown as ClusterFixture;
  beforeAll(async () => {
    [fixture.cluster, fixture.db] = await Promise.all([startNatsCluster(3), createTestDatabase(label)]);
    nc = await connect({
      servers: fixture.cluster.nodes.map((n) => n.url),
      timeout: 3000,
      maxReconnectAttempts: -1,
    });
    fixture.jsm = await jetstreamManager(nc, { timeout: 3000 });
  }, 60_000);
  afterEach(async () => {
    await Promise.all(fixture.processes.splice(0).map((p) => p.stop()));
  });
  afterAll(async () => {
    await nc?.close();
    await fixture.cluster?.destroy();
    await fixture.db?.drop();
  });
  return fixture;
}
