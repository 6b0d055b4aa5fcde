/**
 * What replication costs an ingest collector: the same closed loop against a stream with one
 * replica and one with three, on the same three-node JetStream cluster on loopback (started here,
 * never the shared NATS), in paired rounds whose order alternates (R1 then R3, then R3 then R1).
 * Besides what the collector accepted and its CPU per event, the CPU all three nats-server
 * processes spent per accepted event and per message in the same window: the publish's cost.
 * Workers are off during the windows, as in the suite's ingest row.
 */
import { randomBytes } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster';
import { startCollector } from './collector-process';
import type { BenchDatabases } from './pg-bench-db';
import { sampleProcess } from './proc-stats';
import { closedLoop, intakeExtra, type Intake } from './queue-intake';
import { figure, round } from './rows';
import type { ServiceProcess } from './service-process';
import { median } from './suites/limits';
import type { BenchRow } from './types';
import type { BodyCorpus } from './workload';

const SUITE = 'queue';
/** R3 must keep at least this share of R1's accepted events/s (issue target). */
const R3_TARGET = 0.8;

export interface ReplicaInputs {
  readonly databases: BenchDatabases;
  readonly rounds: number;
  readonly windowMs: number;
  readonly warmup: BodyCorpus;
  readonly bodies: BodyCorpus;
}

interface Side {
  readonly intake: Intake;
  /** The nats-server CPU per accepted event of the stream's leader, and of all three (microseconds). */
  readonly leaderCpuMicrosPerEvent: number;
  readonly natsCpuMicrosPerEvent: number;
  /** Messages the stream took per accepted event (one per request and lane). */
  readonly messagesPerEvent: number;
}

type Round = Record<1 | 3, Side>;

/** CPU seconds of each node of the cluster now, in the order of `cluster.nodes`. */
function clusterCpu(cluster: NatsCluster): number[] {
  return cluster.nodes.map((node) => {
    const pid = node.pid();
    return pid === null ? NaN : sampleProcess(pid).cpuSeconds;
  });
}

async function side(
  cluster: NatsCluster,
  databaseUrl: string,
  replicas: 1 | 3,
  round: number,
  x: ReplicaInputs,
): Promise<Side> {
  const stream = `SLUICE_BENCH_R${replicas}_${process.pid}_${randomBytes(3).toString('hex')}_${round}`;
  let collector: ServiceProcess | null = null;
  const nc = await connect({ servers: cluster.nodes.map((n) => n.url), timeout: 3000 });
  try {
    collector = await startCollector({
      databaseUrl,
      ack: 'queued',
      extraEnv: {
        SLUICE_MODE: 'ingest',
        SLUICE_NATS_URL: cluster.url,
        SLUICE_NATS_STREAM: stream,
        SLUICE_NATS_SUBJECT_PREFIX: `sluice-bench.${stream.toLowerCase()}`,
        SLUICE_NATS_MAX_BYTES: '4GiB',
        SLUICE_NATS_REPLICAS: String(replicas),
      },
    });
    const intake = await closedLoop(collector, x.warmup, x.bodies, x.windowMs, () => clusterCpu(cluster));
    const jsm = await jetstreamManager(nc, { timeout: 3000 });
    const info = await jsm.streams.info(stream);
    if ((info.config.num_replicas || 1) !== replicas) {
      throw new Error(`stream ${stream} has ${info.config.num_replicas} replicas, not ${replicas}`);
    }
    const leader = cluster.nodes.findIndex((n) => n.name === info.cluster?.leader);
    return {
      intake,
      leaderCpuMicrosPerEvent: intake.othersCpuMicrosPerEvent[leader] ?? NaN,
      natsCpuMicrosPerEvent: intake.othersCpuMicrosPerEvent.reduce((sum, v) => sum + v, 0),
      messagesPerEvent: info.state.last_seq / Math.max(1, intake.acceptedTotal),
    };
  } finally {
    await collector?.stop();
    const jsm = await jetstreamManager(nc, { timeout: 3000 }).catch(() => null);
    for (const name of [stream, `${stream}_DEAD`]) await jsm?.streams.delete(name).catch(() => undefined);
    await nc.close();
  }
}

/** The R1 and R3 rows: accepted events/s, the collector's and the NATS servers' CPU per event. */
export async function runReplicaRounds(x: ReplicaInputs): Promise<BenchRow[]> {
  const cluster = await startNatsCluster(3);
  const db = await x.databases.fresh('queue_replicas');
  try {
    const runs: Round[] = [];
    for (let r = 0; r < x.rounds; r++) {
      const order: Array<1 | 3> = r % 2 === 0 ? [1, 3] : [3, 1];
      const sides: Partial<Round> = {};
      for (const replicas of order) sides[replicas] = await side(cluster, db.url, replicas, r, x);
      runs.push(sides as Round);
    }
    const of = (pick: (r: Round) => number): number[] => runs.map(pick);
    const extra = (replicas: 1 | 3): Record<string, number | string> => ({
      runs: of((r) => r[replicas].intake.acceptedPerSecond)
        .map((v) => round(v))
        .join('/'),
      ...intakeExtra(runs, (r) => r[replicas].intake),
      nats_cpu_us_per_event: round(median(of((r) => r[replicas].natsCpuMicrosPerEvent))),
      nats_leader_cpu_us_per_event: round(median(of((r) => r[replicas].leaderCpuMicrosPerEvent))),
      nats_cpu_us_per_message: round(
        median(of((r) => r[replicas].natsCpuMicrosPerEvent / r[replicas].messagesPerEvent)),
      ),
      events_per_message: round(median(of((r) => 1 / r[replicas].messagesPerEvent))),
      cluster: '3 nats-server processes on loopback',
    });
    const r1 = figure(
      SUITE,
      'ingest collector, stream R1 on a 3-node cluster, accepted',
      median(of((r) => r[1].intake.acceptedPerSecond)),
      'events/s',
      extra(1),
    );
    const ratios = of((r) => r[3].intake.acceptedPerSecond / r[1].intake.acceptedPerSecond);
    const ratio = median(ratios);
    const r3: BenchRow = {
      suite: SUITE,
      name: 'ingest collector, stream R3 on a 3-node cluster, accepted',
      value: median(of((r) => r[3].intake.acceptedPerSecond)),
      unit: 'events/s',
      baseline: r1.name,
      ratio,
      target: `ratio ≥ ${R3_TARGET} (median of ${x.rounds} paired rounds)`,
      met: ratio >= R3_TARGET,
      extra: { ...extra(3), paired_ratios: ratios.map((v) => round(v)).join('/') },
    };
    return [r1, r3];
  } finally {
    await cluster.destroy();
    await x.databases.drop(db);
  }
}
