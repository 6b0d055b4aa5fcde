import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { waitFor } from '../support/http';
import type { NatsNode } from '../support/nats-cluster';
import { SteadyLoad } from '../support/steady-load';
import { TcpProxy } from '../support/tcp-proxy';
import {
  exactlyOnce,
  metricValue,
  startWorkerProcess,
  useClusterFixture,
  type WorkerProcess,
} from './queue-support';

/** How soon after a fault every collector must answer 202 again (milliseconds). */
const RECOVERY_BOUND_MS = 10_000;
/** How long the SIGSTOP fault freezes the leader (milliseconds). */
const FREEZE_MS = 15_000;
/**
 * The workers' ack wait in these tests: an ack sent to a server that died or froze is lost, and
 * its message is delivered again (and deduplicated) after this; the default 30 s would only make
 * the tests wait longer.
 */
const ACK_WAIT = '5s';

/**
 * Tier 4 on a replicated stream: a 3-node JetStream cluster on loopback (never the shared NATS),
 * ingest collectors given every node's URL, workers draining, steady load throughout; then the
 * stream's leader is killed or frozen, or a worker dies mid-batch. Every 202-acknowledged event
 * must end up stored exactly once (checked per id), and no answer may be other than 202, or
 * 429/503 with `Retry-After`.
 */
describe('queue mode on a 3-node JetStream cluster (SLUICE_NATS_REPLICAS=3)', () => {
  const f = useClusterFixture('queue_cluster');
  const { processes } = f;

  /** A stream of the test's own on the cluster, replicated 3 times, as the compose file runs it. */
  function streamEnv(label: string): { stream: string; env: Record<string, string> } {
    const { stream, env } = f.stream(label);
    return { stream, env: { ...env, SLUICE_NATS_REPLICAS: '3' } };
  }

  async function collectors(env: Record<string, string>, n: number): Promise<CollectorProcess[]> {
    const started = await Promise.all(
      Array.from({ length: n }, () => startCollectorProcess({ ...env, SLUICE_MODE: 'ingest' })),
    );
    processes.push(...started);
    return started;
  }

  async function workers(env: Record<string, string>, n: number): Promise<WorkerProcess[]> {
    const started = await Promise.all(Array.from({ length: n }, () => startWorkerProcess(env)));
    processes.push(...started);
    return started;
  }

  function load(urls: string[], app: string): SteadyLoad {
    return new SteadyLoad({
      urls,
      sendersPerTarget: 2,
      eventsPerRequest: 20,
      intervalMs: 100,
      maxMs: 75_000,
      maxRequests: 20_000,
      app,
    });
  }

  /** Every answer was a 202, or a 429/503 that says when to come back. */
  function expectOnlyRetryableRefusals(l: SteadyLoad): void {
    expect(l.answersOtherThan([202, 429, 503])).toEqual([]);
    expect(l.answers.filter((a) => a.status !== 202 && a.retryAfter === null)).toEqual([]);
  }

  /**
   * The node's own copy of the stream reaches the leader's last sequence. Bounded at 60 s: a node
   * back from a 15 s freeze, on a box running the rest of the suite, has taken over 30. A timeout
   * says where the node stood.
   *
   * A thawed leader may hold a tail past the new leader's last sequence (seen: own 434, leader
   * 432): messages it stored as leader that never reached a quorum, so no publisher was
   * acknowledged for them. nats-server 2.9 keeps that tail until the stream is next written to;
   * the node lacks nothing the leader holds, so it counts as caught up. What was acknowledged is checked
   * per id by `exactlyOnce`.
   */
  async function caughtUp(stream: string, node: NatsNode): Promise<void> {
    await waitFor(
      `${node.name} to catch up on ${stream}`,
      async () => {
        const info = await f.jsm.streams.info(stream);
        const own = await node.streamState(stream);
        const replica = info.cluster?.replicas?.find((r) => r.name === node.name);
        if (own !== null && own.lastSeq >= info.state.last_seq && replica?.current === true) return true;
        throw new Error(
          `own last_seq ${own?.lastSeq ?? 'none'}, leader ${info.cluster?.leader ?? 'none'} last_seq ` +
            `${info.state.last_seq}, replica ${JSON.stringify(replica ?? null)}`,
        );
      },
      60_000,
    );
  }

  /**
   * Load through two collectors, two workers draining; `fault` hits the stream's leader. Every
   * collector answers 202 again within RECOVERY_BOUND_MS; the leader, back, catches up; every
   * acknowledged event is stored once and the stream ends empty (every message acked, those whose
   * ack was lost after their redelivery).
   */
  async function leaderFault(
    label: string,
    fault: (leader: NatsNode) => Promise<() => Promise<void>>,
  ): Promise<void> {
    const { stream, env } = streamEnv(label);
    const cs = await collectors(env, 2);
    await workers({ ...env, SLUICE_WORKER_ACK_WAIT: ACK_WAIT }, 2);
    expect((await f.jsm.streams.info(stream)).config.num_replicas).toBe(3);

    const l = load(
      cs.map((c) => c.url),
      label,
    );
    try {
      await waitFor('steady 202s before the fault', () => l.acknowledged.length >= 1000, 20_000);
      const leader = await f.cluster.leaderOf(stream);
      const faultAt = Date.now();
      const heal = await fault(leader);
      await waitFor(
        'every collector answering 202 again',
        () => l.first202After(faultAt).every((t) => t !== null),
        RECOVERY_BOUND_MS + 15_000,
      );
      expect(Math.max(...l.first202After(faultAt).map((t) => t ?? Infinity))).toBeLessThanOrEqual(
        RECOVERY_BOUND_MS,
      );
      await heal();
      const healedAt = Date.now();
      await waitFor(
        'load on the healed cluster',
        () => l.first202After(healedAt + 1000).every((t) => t !== null),
        15_000,
      );
      await l.stop();
      await caughtUp(stream, leader);
    } finally {
      await l.stop();
    }
    expectOnlyRetryableRefusals(l);
    expect(l.answers.filter((a) => a.status !== 202).length).toBeGreaterThan(0);
    await waitFor(
      'every acknowledged event stored exactly once',
      async () => (await exactlyOnce(f.db.url, l.acknowledged)) === null,
      30_000,
    ).catch(async (err: unknown) => {
      throw new Error(`${String(err)}: ${await exactlyOnce(f.db.url, l.acknowledged)}`);
    });
    await waitFor(
      'every message acked',
      async () => (await f.jsm.streams.info(stream)).state.messages === 0,
      30_000,
    );
  }

  it('kill -9 of the stream leader: 202 again within 10 s, nothing acknowledged lost or doubled, the node catches up', async () => {
    await leaderFault('kill', async (leader) => {
      await leader.kill();
      return () => leader.start();
    });
  }, 180_000);

  it('the stream leader frozen for 15 s (SIGSTOP, then SIGCONT): the same guarantees', async () => {
    await leaderFault('freeze', async (leader) => {
      const frozenAt = Date.now();
      leader.freeze();
      return async () => {
        const left = frozenAt + FREEZE_MS - Date.now();
        if (left > 0) await new Promise((r) => setTimeout(r, left));
        leader.thaw();
      };
    });
  }, 180_000);

  it('kill -9 of a worker mid-batch: its messages are delivered again after the ack wait and stored once', async () => {
    const { stream, env } = streamEnv('worker');
    const workerEnv = { ...env, SLUICE_WORKER_ACK_WAIT: '2s', SLUICE_WORKER_BATCH_SIZE: '200' };
    const [c] = await collectors(env, 1);
    // Worker A reaches PostgreSQL through a proxy the test cuts: the batch it pulls next hangs in
    // its write, unacked, when it is killed. Worker B drains beside it.
    const target = new URL(f.db.url);
    const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    const viaProxy = new URL(f.db.url);
    viaProxy.port = String(proxy.port);
    const l = load([c!.url], 'worker-kill');
    let maxAckPending: number | undefined;
    const ackPending: number[] = [];
    let sampler: NodeJS.Timeout | undefined;
    try {
      const [a] = await workers({ ...workerEnv, SLUICE_DATABASE_URL: viaProxy.toString() }, 1);
      const [b] = await workers(workerEnv, 1);
      expect((await f.jsm.streams.info(stream)).config.num_replicas).toBe(3);
      const consumer = `${stream}_standard`;
      maxAckPending = (await f.jsm.consumers.info(stream, consumer)).config.max_ack_pending ?? 0;
      sampler = setInterval(() => {
        f.jsm.consumers.info(stream, consumer).then(
          (info) => ackPending.push(info.num_ack_pending),
          () => undefined,
        );
      }, 200);
      await waitFor('steady 202s', () => l.acknowledged.length >= 500, 20_000);
      // Batches A fetched (counted as it starts one) and settled (counted as it ends one).
      const batches = async () => ({
        fetched: await metricValue(a!.url, 'sluice_queue_worker_batch_size_messages_count'),
        settled: await metricValue(a!.url, 'sluice_queue_worker_batch_duration_seconds_count'),
      });
      const atCut = await batches();
      proxy.cut();
      // After the cut no write of A commits: a batch it starts, or one it was writing when the cut
      // landed (likelier the slower the box), stays unacked until it dies. A batch in hand on two
      // polls a second apart, none settled between, is not the ack tail of one committed before.
      let inHandSince: { at: number; settled: number } | null = null;
      await waitFor(
        'worker A holding a batch it cannot commit',
        async () => {
          const now = await batches();
          if (now.fetched > atCut.fetched) return true;
          if (now.fetched <= now.settled || (inHandSince !== null && inHandSince.settled !== now.settled)) {
            inHandSince = null;
            return false;
          }
          inHandSince ??= { at: Date.now(), settled: now.settled };
          return Date.now() - inHandSince.at >= 1000;
        },
        15_000,
      );
      const before = await metricValue(b!.url, 'sluice_queue_redeliveries_total');
      await a!.kill();
      await waitFor(
        'worker B taking the killed worker’s messages after the ack wait',
        async () => (await metricValue(b!.url, 'sluice_queue_redeliveries_total')) > before,
        15_000,
      );
      await l.stop();
    } finally {
      clearInterval(sampler);
      await l.stop();
      await proxy.close();
    }
    expectOnlyRetryableRefusals(l);
    await waitFor(
      'every acknowledged event stored exactly once',
      async () => (await exactlyOnce(f.db.url, l.acknowledged)) === null,
      30_000,
    );
    expect(maxAckPending).toBeGreaterThan(0);
    expect(ackPending.length).toBeGreaterThan(0);
    expect(Math.max(...ackPending)).toBeLessThan(maxAckPending!);
    await waitFor(
      'every message acked',
      async () => (await f.jsm.streams.info(stream)).state.messages === 0,
      15_000,
    );
  }, 120_000);
});
