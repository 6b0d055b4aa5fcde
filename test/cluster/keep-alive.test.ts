import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { metric } from '../support/events';
import { waitFor } from '../support/http';
import { startTestCluster, type TestCluster } from './support/test-cluster';

/** HAProxy's `timeout http-keep-alive` in this test (client side), and the collectors' keepAliveTimeout above it. */
const HAPROXY_KEEP_ALIVE_MS = 1500;
const COLLECTOR_KEEP_ALIVE_MS = 2000;
/** HAProxy halves its pool of idle server connections every pool-purge-delay (default 5 s). */
const POOL_PURGE_DELAY_MS = 5000;

let t: TestCluster;

beforeAll(async () => {
  t = await startTestCluster('keepalive', {
    httpKeepAliveMs: HAPROXY_KEEP_ALIVE_MS,
    env: { SLUICE_KEEP_ALIVE_TIMEOUT_MS: String(COLLECTOR_KEEP_ALIVE_MS) },
  });
}, 90_000);

afterAll(async () => {
  await t?.close();
});

/** A keep-alive client that remembers every socket it opened. */
class KeepAliveClient {
  readonly agent: Agent;
  readonly sockets = new Set<Socket>();
  readonly statuses: Record<string, number> = {};

  constructor(connections: number) {
    this.agent = new Agent({ keepAlive: true, maxSockets: connections, keepAliveMsecs: 60_000 });
  }

  post(url: string): Promise<number> {
    const u = new URL(url);
    const body = Buffer.from(JSON.stringify({ events: [metric('keepalive')] }));
    return new Promise<number>((resolve) => {
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path: '/v1/events',
          method: 'POST',
          agent: this.agent,
          timeout: 10_000,
          headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('socket', (s: Socket) => this.sockets.add(s));
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => resolve(-1));
      req.end(body);
    }).then((status) => {
      this.statuses[status] = (this.statuses[status] ?? 0) + 1;
      return status;
    });
  }

  async burst(url: string, n: number): Promise<void> {
    await Promise.all(Array.from({ length: n }, () => this.post(url)));
  }

  get openSockets(): number {
    return [...this.sockets].filter((s) => !s.destroyed).length;
  }
}

describe('keep-alive connections through HAProxy', () => {
  it('left idle past every timeout, then reused: zero 502s', async () => {
    const url = t.cluster.url;
    const client = new KeepAliveClient(8);
    try {
      await client.burst(url, 32);
      expect(client.sockets.size).toBe(8);
      const idleSince = Date.now();
      // Idle past every timeout on the path: HAProxy's on the client side closes our sockets
      // (observed, not assumed), the collectors' keepAliveTimeout and HAProxy's pool purge both pass.
      const idleUntil =
        idleSince + Math.max(HAPROXY_KEEP_ALIVE_MS, COLLECTOR_KEEP_ALIVE_MS, POOL_PURGE_DELAY_MS) + 500;
      await waitFor(
        'idle connections to pass every timeout',
        () => client.openSockets === 0 && Date.now() >= idleUntil,
        15_000,
      );
      await client.burst(url, 32);

      // Then a trickle that keeps client connections open (gaps below HAProxy's 1.5 s) while
      // HAProxy picks idle server connections of every age, some right where the collectors
      // close them (2 s): the race that produces 502s when the timeouts are the wrong way round.
      await client.burst(url, 24);
      const trickleUntil = Date.now() + 3 * COLLECTOR_KEEP_ALIVE_MS;
      for (let i = 0; i < 100 && Date.now() < trickleUntil; i++) {
        await client.post(url);
        await new Promise((r) => setTimeout(r, 150 + (i % 5) * 50));
      }
    } finally {
      client.agent.destroy();
    }
    const servers = await t.cluster.servers();
    const retries = servers.reduce((n, s) => n + s.retries, 0);
    process.stdout.write(
      `keep-alive: client statuses ${JSON.stringify(client.statuses)}; HAProxy retries ${retries}\n`,
    );
    expect(client.statuses['502'] ?? 0).toBe(0);
    expect(Object.keys(client.statuses)).toEqual(['202']);
    expect(servers.reduce((n, s) => n + s.responses5xx, 0)).toBe(0);
  }, 60_000);
});
