import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { metric } from '../support/events';
import { startTestCluster, type TestCluster } from './support/test-cluster';

/** Slow connections opened per round: half trickle their headers, half their body. */
const SLOW_CONNECTIONS = 200;
/** Requests of the well-behaved client per round, and how many it keeps in flight. */
const REQUESTS = 300;
const CONCURRENCY = 4;
const ROUNDS = 5;

let t: TestCluster;

beforeAll(async () => {
  t = await startTestCluster('slowloris');
}, 90_000);

afterAll(async () => {
  await t?.close();
});

/** Opens a connection through the front door that sends part of a request, then a byte every 500 ms. */
function slowClient(url: string, part: 'headers' | 'body'): Socket {
  const u = new URL(url);
  const socket = connect(Number(u.port), u.hostname);
  socket.on('error', () => undefined);
  const head =
    part === 'headers'
      ? 'POST /v1/events HTTP/1.1\r\nHost: sluice\r\n'
      : 'POST /v1/events HTTP/1.1\r\nHost: sluice\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"events":[';
  socket.write(head);
  const drip = setInterval(() => {
    if (socket.writable) socket.write(part === 'headers' ? 'X' : ' ');
  }, 500);
  socket.on('close', () => clearInterval(drip));
  return socket;
}

/** p99 latency (ms) of `REQUESTS` single-event POSTs through the front door. */
async function p99(url: string): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const body = Buffer.from(JSON.stringify({ events: [metric('well-behaved')] }));
      const started = performance.now();
      const req = request(
        `${url}/v1/events`,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': body.length },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - started);
            statuses.set(res.statusCode ?? 0, (statuses.get(res.statusCode ?? 0) ?? 0) + 1);
            resolve();
          });
        },
      );
      req.setTimeout(10_000, () => req.destroy(new Error('request timed out')));
      req.on('error', reject);
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < REQUESTS) await one();
    }),
  );
  agent.destroy();
  expect([...statuses.keys()]).toEqual([202]);
  latencies.sort((a, b) => a - b);
  return latencies[Math.floor(latencies.length * 0.99)] as number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

describe('slow clients through the real HAProxy (reliability case 18)', () => {
  it("slowloris connections (headers or body trickled) do not move other clients' p99 by more than 20%", async () => {
    const url = t.cluster.url;
    await p99(url); // warm-up: connections, JIT
    const calm: number[] = [];
    const attacked: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      calm.push(await p99(url));
      const slow = Array.from({ length: SLOW_CONNECTIONS }, (_, i) =>
        slowClient(url, i % 2 ? 'headers' : 'body'),
      );
      try {
        attacked.push(await p99(url));
      } finally {
        for (const s of slow) s.destroy();
      }
    }
    // Medians of rounds that alternate, so a noisy neighbour on the box weighs on both sides;
    // 2 ms of slack for timer granularity on sub-10 ms figures.
    const base = median(calm);
    const under = median(attacked);
    expect(under).toBeLessThanOrEqual(base * 1.2 + 2);
  }, 180_000);
});
