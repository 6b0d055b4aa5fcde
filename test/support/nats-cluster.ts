/**
 * Real nats-server processes on loopback for the tests and the bench that need more than the
 * shared server on 4222 (never touched here): a JetStream cluster of N nodes joined by routes,
 * each on free ports with a store directory of its own, which a test may kill -9, restart on the
 * same ports and store, or freeze (SIGSTOP) and thaw.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort } from '../../src/dev-cluster/free-port';
import { waitFor } from './http';
import { reachable } from './services';
import { REQUIRED_TOOLS } from './system-tools/required-tools';

/** `TEST_NATS_SERVER_BIN`, else where `npm test` finds it (see required-tools.ts). */
export const NATS_SERVER_BIN =
  process.env.TEST_NATS_SERVER_BIN ??
  REQUIRED_TOOLS.find((t) => t.name === 'nats-server')?.locate(process.env.PATH) ??
  '/usr/sbin/nats-server';

/** One nats-server process, restartable with the same arguments (ports, store). */
export interface NatsNode {
  /** Its `server_name`, as JetStream names a stream's leader and replicas. */
  readonly name: string;
  /** `nats://127.0.0.1:<client port>` */
  readonly url: string;
  /** `http://127.0.0.1:<monitoring port>` (`/jsz`, `/routez`, `/healthz`). */
  readonly monitorUrl: string;
  /** The running process's id, or null while it is down. */
  pid(): number | null;
  /** Starts it (again) and waits until its client port accepts connections. */
  start(): Promise<void>;
  /** SIGKILL: gone as in a crash; its store stays. */
  kill(): Promise<void>;
  /** SIGSTOP: its sockets stay open and nothing is answered. */
  freeze(): void;
  /** SIGCONT. */
  thaw(): void;
  /** What this node's own copy of `stream` holds (its monitoring endpoint `/jsz`); null when it has none. */
  streamState(stream: string): Promise<{ messages: number; lastSeq: number } | null>;
}

interface JszStreams {
  account_details?: Array<{
    stream_detail?: Array<{ name: string; state: { messages: number; last_seq: number } }>;
  }>;
}

/** Starts `nats-server` with `args` (the client port and monitoring port named separately, for the URLs). */
export function natsNode(o: {
  name: string;
  args: readonly string[];
  /** Variables the server sees besides PATH (a config file may refer to them). */
  env?: Record<string, string>;
  clientPort: number;
  monitorPort: number;
}): NatsNode {
  const url = `nats://127.0.0.1:${o.clientPort}`;
  let child: ChildProcess | null = null;
  const alive = (c: ChildProcess | null): c is ChildProcess =>
    c !== null && c.exitCode === null && c.signalCode === null;
  return {
    name: o.name,
    url,
    monitorUrl: `http://127.0.0.1:${o.monitorPort}`,
    pid: () => (alive(child) ? (child.pid ?? null) : null),
    async start() {
      if (alive(child)) return;
      const c = spawn(NATS_SERVER_BIN, [...o.args], {
        stdio: 'ignore',
        env: { PATH: process.env.PATH ?? '', ...o.env },
      });
      child = c;
      const failed = new Promise<never>((_, reject) => {
        c.once('error', (err) =>
          reject(
            new Error(`cannot start ${NATS_SERVER_BIN} (${err.message}); apt-get install -y nats-server`),
          ),
        );
        c.once('exit', (code) => reject(new Error(`nats-server ${o.name} exited at start (code ${code})`)));
      });
      failed.catch(() => undefined);
      await Promise.race([
        waitFor(`nats-server ${o.name} on ${url}`, () => reachable(url, 200), 15_000),
        failed,
      ]);
    },
    async kill() {
      const c = child;
      if (!alive(c)) return;
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await gone;
    },
    freeze: () => void (alive(child) && child.kill('SIGSTOP')),
    thaw: () => void (alive(child) && child.kill('SIGCONT')),
    async streamState(stream) {
      const res = await fetch(`http://127.0.0.1:${o.monitorPort}/jsz?accounts=true&streams=true`);
      const jsz = (await res.json()) as JszStreams;
      for (const account of jsz.account_details ?? []) {
        const s = account.stream_detail?.find((d) => d.name === stream);
        if (s) return { messages: s.state.messages, lastSeq: s.state.last_seq };
      }
      return null;
    },
  };
}

/** A JetStream cluster on loopback. */
export interface NatsCluster {
  readonly nodes: readonly NatsNode[];
  /** Every node's client URL, comma-separated: what `SLUICE_NATS_URL` takes. */
  readonly url: string;
  /** The node whose `server_name` is `name`. */
  node(name: string): NatsNode;
  /** The node leading `stream` now (asked of any node that answers). */
  leaderOf(stream: string): Promise<NatsNode>;
  /** Kills every node and deletes their stores. */
  destroy(): Promise<void>;
}

/**
 * The nats-server flags of one cluster node: JetStream with its own store, a name, the cluster's
 * name and a route to every node (its own route included: the server ignores a route to itself,
 * so every node takes the same list, as the compose file's do).
 */
export function clusterNodeArgs(o: {
  name: string;
  clusterName: string;
  storeDir: string;
  clientPort: number;
  clusterPort: number;
  monitorPort: number;
  routePorts: readonly number[];
}): string[] {
  return [
    '-js',
    '-sd',
    o.storeDir,
    '-n',
    o.name,
    '-a',
    '127.0.0.1',
    '-p',
    String(o.clientPort),
    '-m',
    String(o.monitorPort),
    '--cluster_name',
    o.clusterName,
    '--cluster',
    `nats://127.0.0.1:${o.clusterPort}`,
    '--routes',
    o.routePorts.map((p) => `nats-route://127.0.0.1:${p}`).join(','),
  ];
}

/** Waits until JetStream answers through every node: the cluster's meta leader is elected. */
export async function waitForJetStream(urls: readonly string[], timeoutMs = 20_000): Promise<void> {
  for (const url of urls) {
    await waitFor(
      `JetStream through ${url}`,
      async () => {
        const nc = await connect({ servers: url, timeout: 1000, reconnect: false });
        try {
          const jsm = await jetstreamManager(nc, { timeout: 1000 });
          await jsm.getAccountInfo();
          return true;
        } finally {
          await nc.close();
        }
      },
      timeoutMs,
    );
  }
}

/** Starts `size` nodes on free ports, joined by routes, and waits until JetStream answers on each. */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'sluice-t-natsc-'));
  const clusterName = `sluice_t_${process.pid}_${path.basename(root).slice(-6)}`;
  const ports: Array<{ client: number; cluster: number; monitor: number }> = [];
  for (let i = 0; i < size; i++) {
    ports.push({ client: await freePort(), cluster: await freePort(), monitor: await freePort() });
  }
  const nodes = ports.map((p, i) => {
    const name = `n${i + 1}`;
    return natsNode({
      name,
      clientPort: p.client,
      monitorPort: p.monitor,
      args: clusterNodeArgs({
        name,
        clusterName,
        storeDir: path.join(root, name),
        clientPort: p.client,
        clusterPort: p.cluster,
        monitorPort: p.monitor,
        routePorts: ports.map((q) => q.cluster),
      }),
    });
  });
  const destroy = async (): Promise<void> => {
    for (const n of nodes) n.thaw();
    await Promise.all(nodes.map((n) => n.kill()));
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await Promise.all(nodes.map((n) => n.start()));
    await waitForJetStream(nodes.map((n) => n.url));
  } catch (err) {
    await destroy();
    throw err;
  }
  const node = (name: string): NatsNode => {
    const n = nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node named ${name} in the cluster`);
    return n;
  };
  const url = nodes.map((n) => n.url).join(',');
  return {
    nodes,
    url,
    node,
    async leaderOf(stream) {
      const nc = await connect({ servers: nodes.map((n) => n.url), timeout: 2000 });
      try {
        const jsm = await jetstreamManager(nc, { timeout: 2000 });
        const leader = (await jsm.streams.info(stream)).cluster?.leader;
        if (!leader) throw new Error(`stream ${stream} has no leader now`);
        return node(leader);
      } finally {
        await nc.close();
      }
    },
    destroy,
  };
}
