import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/dev-cluster/free-port';
import { dockerCompose, serviceBlock, serviceEnv, serviceList } from '../support/compose-file';
import { waitFor } from '../support/http';
import { natsNode, waitForJetStream, type NatsNode } from '../support/nats-cluster';

/** A NATS service of the rendered compose file. */
interface NatsService {
  readonly service: string;
  readonly serverName: string;
  /** The config file on this machine, and where the container reads it. */
  readonly configFile: string;
  /** `name:/target` of each named volume (host paths excluded). */
  readonly namedVolumes: string[];
}

/** The config file's port and address lines, rewritten for loopback with free ports. */
interface LoopbackPorts {
  readonly client: number;
  readonly cluster: number;
  readonly monitor: number;
}

/**
 * `docker-compose config` renders the NATS services; this test checks what they would run: one
 * config file, a name and a volume each, routes naming every service, and (with every address
 * remapped to a free loopback port and the store to a temporary folder) three real nats-server
 * processes that form one JetStream cluster, placing an R3 stream on all three.
 */
describe('docker-compose.yml: the NATS servers of the queue profile form one JetStream cluster', () => {
  let rendered = '';
  let nats: NatsService[] = [];

  beforeAll(() => {
    const r = dockerCompose(['config']);
    if (r.status !== 0) throw new Error(`docker-compose config failed:\n${r.stderr}`);
    rendered = r.stdout;
    const services = dockerCompose(['config', '--services']).stdout.split('\n').filter(Boolean);
    nats = services
      .filter((s) => /^nats-\d+$/.test(s))
      .map((service) => {
        const block = serviceBlock(rendered, service);
        const command = serviceList(block, 'command');
        const configPath = command[command.indexOf('--config') + 1];
        const volumes = serviceList(block, 'volumes');
        const config = volumes.find((v) => v.split(':')[1] === configPath);
        if (!config) throw new Error(`${service}: no volume mounts its --config ${configPath}`);
        return {
          service,
          serverName: serviceEnv(block, 'NATS_SERVER_NAME') ?? '',
          configFile: config.split(':')[0] ?? '',
          namedVolumes: volumes.filter((v) => !v.startsWith('/')),
        };
      });
  });

  it('runs three servers from one config file, each with its own name and volume', () => {
    expect(nats.map((n) => n.service)).toEqual(['nats-1', 'nats-2', 'nats-3']);
    expect(new Set(nats.map((n) => n.serverName)).size).toBe(3);
    expect(new Set(nats.map((n) => n.configFile)).size).toBe(1);
    const storeDir = /store_dir:\s*(\S+)/.exec(readFileSync(nats[0]!.configFile, 'utf8'))?.[1];
    const stores = nats.map((n) => n.namedVolumes.find((v) => v.split(':')[1] === storeDir));
    expect(stores.every((v) => v !== undefined)).toBe(true);
    expect(new Set(stores.map((v) => v!.split(':')[0])).size).toBe(3);
  });

  it('gives collectors and workers every server and three replicas', () => {
    const configText = readFileSync(nats[0]!.configFile, 'utf8');
    const clientPort = /^listen:\s*[\d.]+:(\d+)/m.exec(configText)?.[1];
    for (const service of ['collector', 'worker']) {
      const block = serviceBlock(rendered, service);
      const urls = (serviceEnv(block, 'SLUICE_NATS_URL') ?? '').split(',');
      expect(urls.sort()).toEqual(nats.map((n) => `nats://${n.service}:${clientPort}`).sort());
      expect(serviceEnv(block, 'SLUICE_NATS_REPLICAS')).toBe('3');
    }
    const worker = serviceBlock(rendered, 'worker');
    for (const n of nats) expect(worker).toContain(`\n      ${n.service}:\n`);
  });

  it('started for real on loopback, the three servers form one cluster that places an R3 stream on all of them', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'sluice-t-compose-nats-'));
    const ports = new Map<string, LoopbackPorts>();
    for (const n of nats) {
      ports.set(n.service, {
        client: await freePort(),
        cluster: await freePort(),
        monitor: await freePort(),
      });
    }
    const nodes: NatsNode[] = [];
    try {
      for (const n of nats) {
        const own = ports.get(n.service)!;
        const file = path.join(root, `${n.service}.conf`);
        const store = path.join(root, n.service);
        writeFileSync(file, loopbackConfig(readFileSync(n.configFile, 'utf8'), own, ports, store));
        nodes.push(
          natsNode({
            name: n.serverName,
            args: ['-c', file],
            env: { NATS_SERVER_NAME: n.serverName },
            clientPort: own.client,
            monitorPort: own.monitor,
          }),
        );
      }
      await Promise.all(nodes.map((node) => node.start()));
      await waitForJetStream(nodes.map((node) => node.url));
      const varz = await Promise.all(
        nodes.map(
          async (node) =>
            (await (await fetch(`${node.monitorUrl}/varz`)).json()) as {
              server_id: string;
              server_name: string;
              cluster?: { name?: string };
            },
        ),
      );
      expect(varz.map((v) => v.server_name)).toEqual(nats.map((n) => n.serverName));
      expect(new Set(varz.map((v) => v.cluster?.name)).size).toBe(1);
      for (const [i, node] of nodes.entries()) {
        const others = varz.filter((_, j) => j !== i).map((v) => v.server_id);
        await waitFor(
          `${node.name} routed to the two others`,
          async () => {
            const routez = (await (await fetch(`${node.monitorUrl}/routez`)).json()) as {
              routes?: Array<{ remote_id?: string }>;
            };
            const peers = [...new Set((routez.routes ?? []).map((r) => r.remote_id))].sort();
            return JSON.stringify(peers) === JSON.stringify([...others].sort());
          },
          15_000,
        );
        const jsz = (await (await fetch(`${node.monitorUrl}/jsz`)).json()) as {
          meta_cluster?: { cluster_size?: number };
        };
        expect(jsz.meta_cluster?.cluster_size).toBe(3);
      }
      const nc = await connect({ servers: nodes.map((node) => node.url), timeout: 3000 });
      try {
        const jsm = await jetstreamManager(nc, { timeout: 3000 });
        const info = await jsm.streams.add({ name: 'COMPOSE_R3', subjects: ['compose.r3'], num_replicas: 3 });
        const placed = [info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((r) => r.name)];
        expect(placed.sort()).toEqual(nats.map((n) => n.serverName).sort());
      } finally {
        await nc.close();
      }
    } finally {
      await Promise.all(nodes.map((node) => node.kill()));
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);
});

/**
 * The compose config file with every address on loopback: its own client, cluster and monitoring
 * ports, each route to the cluster port of the service it names, the store in `storeDir`. Throws
 * when the file does not have the lines this rewrites (a changed file must change this test).
 */
function loopbackConfig(
  text: string,
  own: LoopbackPorts,
  all: ReadonlyMap<string, LoopbackPorts>,
  storeDir: string,
): string {
  let out = text;
  const rewrite = (re: RegExp, to: (...m: string[]) => string, expected: number): void => {
    const found = out.match(re)?.length ?? 0;
    if (found !== expected) {
      throw new Error(
        `deploy/nats/nats-server.conf: expected ${expected} match(es) of ${re}, found ${found}`,
      );
    }
    out = out.replace(re, to);
  };
  rewrite(/^listen:\s*0\.0\.0\.0:\d+$/gm, () => `listen: 127.0.0.1:${own.client}`, 1);
  rewrite(/^http:\s*0\.0\.0\.0:\d+$/gm, () => `http: 127.0.0.1:${own.monitor}`, 1);
  rewrite(
    /^(\s+)listen:\s*0\.0\.0\.0:\d+$/gm,
    (_m, indent) => `${indent}listen: 127.0.0.1:${own.cluster}`,
    1,
  );
  rewrite(/store_dir:\s*\S+/g, () => `store_dir: "${storeDir}"`, 1);
  rewrite(
    /nats-route:\/\/([a-z0-9-]+):\d+/g,
    (_m, host) => {
      const target = all.get(host ?? '');
      if (!target) throw new Error(`a route names ${host}, which is not a NATS service of the compose file`);
      return `nats-route://127.0.0.1:${target.cluster}`;
    },
    all.size,
  );
  return out;
}
