/**
 * Tier 4 figures: accepted events/s of an ingest-mode collector (publish to JetStream, 202 after
 * the acks) against a direct-to-PostgreSQL collector on the same box and the same bodies, and the
 * workers' drain rate of the backlog that run left in the stream, as a ratio of raw COPY measured
 * right before the drain. Both sides of each ratio are measured back to back, in `ROUNDS` paired
 * rounds; a ratio is the median of its rounds' (a shared box's load then hits both sides). Bounded:
 * about 15 s a round (BENCH_QUICK=1: one round of about 12 s).
 *
 * Per round the PostgreSQL backends' CPU per row is read too (of the raw COPY and of the workers'
 * drain; `pg-backend-cpu.ts`). After the rounds, `queue-replicas.ts` measures the ingest collector
 * against an R1 and an R3 stream on a three-node cluster of its own (target: R3 ≥ 0.8 × R1).
 *
 * NATS: `BENCH_NATS_URL`, else `TEST_NATS_URL`, else nats://127.0.0.1:4222; each round has
 * a stream of its own, deleted at the end.
 *
 * `BENCH_QUEUE_PROFILE_DIR`: when set, the ingest collector and the workers run with `--cpu-prof`
 * and write their profiles there (investigation only; the profiler costs CPU).
 */
import { randomBytes } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { rawCopy, sluiceCopyChunks } from './baselines/raw-copy';
import { readBenchOptions } from './bench-options';
import { CLI_SCRIPT, cleanEnv, collectorNodeArgs, startCollector } from './collector-process';
import { freePort } from '../../src/dev-cluster/free-port';
import { closedLoop, intakeExtra, WARMUP_REQUESTS, type Intake } from './queue-intake';
import { BenchDatabases, RowCounter, storedBytes } from './pg-bench-db';
import { figure, round } from './rows';
import { median } from './suites/limits';
import { PgBackendCpu } from './pg-backend-cpu';
import { runReplicaRounds } from './queue-replicas';
import { startService, type ServiceProcess } from './service-process';
import { telemetryEvents } from './telemetry-events';
import type { BenchRow } from './types';
import { BodyCorpus, EventGenerator } from './workload';

const SUITE = 'queue';
const WORKERS = 2;
const WORKER_BATCH = 2000;
/** Events per COPY transaction of the baseline (as the limits suite). */
const COPY_EVENTS_PER_TRANSACTION = 1000;
/** Paired rounds of a full run (BENCH_QUICK=1: one); each ratio is the median of its rounds. */
const ROUNDS = 3;
/** Longest wait for the workers to store the backlog (milliseconds). */
const DRAIN_TIMEOUT_MS = 20_000;
/** Bounds of this suite's own raw COPY baseline (events, milliseconds): a share of the 60 s budget. */
const COPY_MAX_EVENTS = 60_000;
const COPY_MAX_MS = 5000;

/**
 * Node flags of the processes under test: the memory flags every bench process runs with (the
 * measured pid is never a relaunching parent), and `--cpu-prof` into `BENCH_QUEUE_PROFILE_DIR` when set.
 */
function profileArgs(): string[] {
  const dir = process.env.BENCH_QUEUE_PROFILE_DIR;
  return [...collectorNodeArgs(), ...(dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [])];
}

function natsUrl(): string {
  return process.env.BENCH_NATS_URL ?? process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
}

async function startWorker(env: NodeJS.ProcessEnv): Promise<ServiceProcess> {
  const port = await freePort();
  return startService({
    name: 'sluice worker',
    script: CLI_SCRIPT,
    args: ['worker'],
    nodeArgs: profileArgs(),
    env: { ...env, SLUICE_WORKER_PORT: String(port) },
    port,
  });
}

/** When the drain was timed: from `startAt` (rows then: `rowsAtStart`) to `endAt` (null: timed out). */
interface DrainTiming {
  readonly startAt: number;
  readonly rowsAtStart: number;
  readonly endAt: number | null;
}

/**
 * Times the workers' drain by the stream's message count (work-queue retention: a message leaves
 * when a worker acks it, after its commit), a cheap JetStream API call polled every 20 ms. Polling
 * `count(*)` of the growing tables as often would spend the database's CPU, on this 2-core box,
 * during the very window that measures how fast the database is written. The clock starts when
 * 5% of the messages are gone (worker start-up excluded), with one row count; it stops when the
 * stream is empty.
 */
class StreamDrain {
  private readonly nc: Promise<NatsConnection>;

  constructor(
    url: string,
    private readonly stream: string,
  ) {
    this.nc = connect({ servers: url, timeout: 3000 });
    // Awaited in `time`; until then a failure must not be an unhandled rejection.
    this.nc.catch(() => undefined);
  }

  private async messages(jsm: JetStreamManager): Promise<number> {
    return (await jsm.streams.info(this.stream)).state.messages;
  }

  async time(counter: RowCounter, timeoutMs: number): Promise<DrainTiming> {
    const jsm = await jetstreamManager(await this.nc);
    const deadline = performance.now() + timeoutMs;
    const initial = await this.messages(jsm);
    const poll = async (done: (left: number) => boolean): Promise<number | null> => {
      for (;;) {
        const at = performance.now();
        if (done(await this.messages(jsm))) return at;
        if (at > deadline) return null;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await poll((left) => left <= initial * 0.95);
    const startAt = performance.now();
    const rowsAtStart = await counter.count();
    const endAt = await poll((left) => left === 0);
    return { startAt, rowsAtStart, endAt };
  }

  async close(): Promise<void> {
    await (await this.nc.catch(() => null))?.close();
  }
}

/** One round's four measurements, back to back on the same box. */
interface Round {
  readonly copy: {
    readonly eventsPerSecond: number;
    readonly events: number;
    /** CPU of the COPY's PostgreSQL backend per row (microseconds). */
    readonly postgresCpuMicrosPerRow: number;
  };
  readonly direct: Intake;
  readonly ingest: Intake;
  readonly drain: {
    readonly eventsPerSecond: number;
    readonly backlog: number;
    readonly cpuMicrosPerEvent: number;
    /** CPU of the workers' PostgreSQL backends per row stored (microseconds). */
    readonly postgresCpuMicrosPerRow: number;
    /** Bytes on disk per row stored, indexes included. */
    readonly bytesPerRow: number;
    readonly allStored: boolean;
    readonly stored: number;
  };
}

interface RoundInputs {
  readonly databases: BenchDatabases;
  readonly copyEvents: number;
  readonly copyMaxMs: number;
  readonly windowMs: number;
  readonly warmup: BodyCorpus;
  readonly bodies: BodyCorpus;
  readonly processes: ServiceProcess[];
  /** Streams made in this round, for the cleanup. */
  readonly streams: string[];
}

/**
 * One round: the direct collector's window, then the ingest collector's on the same bodies (workers
 * off: the burst piles up in the stream, as in the design), then raw COPY, then the workers' drain
 * of that backlog — each ratio's two sides measured next to each other. A stream of the round's
 * own: the same bodies in a later round must not be JetStream duplicates of this one's.
 */
async function runRound(x: RoundInputs, round: number): Promise<Round> {
  const stream = `SLUICE_BENCH_${process.pid}_${randomBytes(3).toString('hex')}_${round}`;
  x.streams.push(stream);
  const queueEnv = {
    SLUICE_NATS_URL: natsUrl(),
    SLUICE_NATS_STREAM: stream,
    SLUICE_NATS_SUBJECT_PREFIX: `sluice-bench.${stream}`,
    SLUICE_NATS_MAX_BYTES: '4GiB',
  };
  const stopped: ServiceProcess[] = [];
  const track = <P extends ServiceProcess>(p: P): P => {
    x.processes.push(p);
    stopped.push(p);
    return p;
  };
  try {
    const directDb = await x.databases.fresh(`queue_direct_${round}`);
    const direct = track(await startCollector({ databaseUrl: directDb.url, ack: 'queued' }));
    const d = await closedLoop(direct, x.warmup, x.bodies, x.windowMs);
    await direct.stop();
    await x.databases.drop(directDb);

    const queueDb = await x.databases.fresh(`queue_ingest_${round}`);
    const ingest = track(
      await startCollector({
        databaseUrl: queueDb.url,
        ack: 'queued',
        extraEnv: { ...queueEnv, SLUICE_MODE: 'ingest' },
        nodeArgs: profileArgs(),
      }),
    );
    const i = await closedLoop(ingest, x.warmup, x.bodies, x.windowMs);

    const copyDb = await x.databases.fresh(`queue_copy_${round}`);
    const copyChunks = sluiceCopyChunks(
      telemetryEvents(x.copyEvents, 33 + round),
      COPY_EVENTS_PER_TRANSACTION,
    );
    const copyBackend = new PgBackendCpu(copyDb.url);
    await copyBackend.start();
    const copied = await rawCopy(copyDb.url, copyChunks, x.copyMaxMs);
    // The backend's CPU covers the warm-up chunks too.
    const copyRows = copied.events + copied.warmupEvents;
    const copyPgCpu = await copyBackend.stop();
    await x.databases.drop(copyDb);

    const counter = new RowCounter(queueDb.url);
    try {
      const workerEnv = {
        ...cleanEnv(),
        ...queueEnv,
        SLUICE_HOST: '127.0.0.1',
        SLUICE_DATABASE_URL: queueDb.url,
        SLUICE_LOG_LEVEL: 'warn',
        SLUICE_WORKER_BATCH_SIZE: String(WORKER_BATCH),
      };
      const drain = new StreamDrain(natsUrl(), stream);
      let timed: DrainTiming;
      let workerCpuSeconds = NaN;
      let postgresCpuSeconds = NaN;
      const backends = new PgBackendCpu(queueDb.url);
      await backends.start();
      try {
        const workers = await Promise.all(Array.from({ length: WORKERS }, () => startWorker(workerEnv)));
        for (const w of workers) track(w);
        const cpu = (): number => workers.reduce((sum, w) => sum + w.sample().cpuSeconds, 0);
        const cpuBefore = cpu();
        timed = await drain.time(counter, DRAIN_TIMEOUT_MS);
        workerCpuSeconds = cpu() - cpuBefore;
      } finally {
        postgresCpuSeconds = await backends.stop();
        await drain.close();
      }
      // Every message acked means every event committed (ack after commit); the count confirms it.
      const total = i.acceptedTotal;
      const last = await counter.waitFor(total, 5000, 50);
      const bytesPerRow = (await storedBytes(queueDb.url)) / Math.max(1, last.rows);
      return {
        copy: {
          eventsPerSecond: copied.eventsPerSecond,
          events: copied.events,
          postgresCpuMicrosPerRow: (copyPgCpu * 1e6) / Math.max(1, copyRows),
        },
        direct: d,
        ingest: i,
        drain: {
          eventsPerSecond:
            timed.endAt !== null && timed.endAt > timed.startAt
              ? (total - timed.rowsAtStart) / ((timed.endAt - timed.startAt) / 1000)
              : NaN,
          backlog: total,
          cpuMicrosPerEvent: (workerCpuSeconds * 1e6) / Math.max(1, total),
          postgresCpuMicrosPerRow: (postgresCpuSeconds * 1e6) / Math.max(1, total),
          bytesPerRow,
          allStored: last.at !== null && timed.endAt !== null,
          stored: last.rows,
        },
      };
    } finally {
      await counter.close();
    }
  } finally {
    await Promise.all(stopped.map((p) => p.stop()));
  }
}

const joined = (values: readonly number[]): string => values.map((v) => round(v)).join('/');

export async function runQueueBench(): Promise<BenchRow[]> {
  const options = readBenchOptions();
  const rounds = options.quick ? 1 : ROUNDS;
  const databases = new BenchDatabases(options.adminUrl);
  const warmup = new BodyCorpus(new EventGenerator(31), 100).ensure(WARMUP_REQUESTS * 100);
  // Enough bodies that both windows are bound by time, not by the corpus.
  const bodies = new BodyCorpus(new EventGenerator(32), 100).ensure(options.quick ? 40_000 : 100_000);
  const x: RoundInputs = {
    databases,
    copyEvents: Math.min(options.copyEvents, COPY_MAX_EVENTS),
    copyMaxMs: Math.min(options.copyMaxMs, COPY_MAX_MS),
    windowMs: options.quick ? 1500 : 3000,
    warmup,
    bodies,
    processes: [],
    streams: [],
  };
  try {
    const runs: Round[] = [];
    for (let r = 0; r < rounds; r++) runs.push(await runRound(x, r));
    const of = (pick: (r: Round) => number): number[] => runs.map(pick);
    const copyRow = figure(
      SUITE,
      'raw COPY, local client (this suite)',
      median(of((r) => r.copy.eventsPerSecond)),
      'events/s',
      {
        runs: joined(of((r) => r.copy.eventsPerSecond)),
        events: runs[0]?.copy.events ?? 0,
        postgres_cpu_us_per_row: round(median(of((r) => r.copy.postgresCpuMicrosPerRow))),
      },
    );
    const directRow = figure(
      SUITE,
      'direct collector (PostgreSQL), accepted',
      median(of((r) => r.direct.acceptedPerSecond)),
      'events/s',
      { runs: joined(of((r) => r.direct.acceptedPerSecond)), ...intakeExtra(runs, (r) => r.direct) },
    );
    const target = (atLeast: number): string => `ratio ≥ ${atLeast} (median of ${rounds} paired rounds)`;
    const ingestRatios = of((r) => r.ingest.acceptedPerSecond / r.direct.acceptedPerSecond);
    const ingestRatio = median(ingestRatios);
    const ingestRow: BenchRow = {
      suite: SUITE,
      name: 'ingest collector (JetStream), accepted',
      value: median(of((r) => r.ingest.acceptedPerSecond)),
      unit: 'events/s',
      baseline: directRow.name,
      ratio: ingestRatio,
      target: target(2),
      met: ingestRatio >= 2,
      extra: {
        runs: joined(of((r) => r.ingest.acceptedPerSecond)),
        paired_ratios: joined(ingestRatios),
        ...intakeExtra(runs, (r) => r.ingest),
        workers: 'off during the window',
      },
    };
    const drainRatios = of((r) => r.drain.eventsPerSecond / r.copy.eventsPerSecond);
    const drainRatio = median(drainRatios);
    const drainRow: BenchRow = {
      suite: SUITE,
      name: `workers drain the backlog (${WORKERS} workers)`,
      value: median(of((r) => r.drain.eventsPerSecond)),
      unit: 'events/s stored',
      baseline: copyRow.name,
      ratio: drainRatio,
      target: target(0.7),
      met: drainRatio >= 0.7,
      extra: {
        runs: joined(of((r) => r.drain.eventsPerSecond)),
        paired_ratios: joined(drainRatios),
        backlog_events: joined(of((r) => r.drain.backlog)),
        batch: WORKER_BATCH,
        worker_cpu_us_per_event: round(median(of((r) => r.drain.cpuMicrosPerEvent))),
        postgres_cpu_us_per_row: round(median(of((r) => r.drain.postgresCpuMicrosPerRow))),
        bytes_on_disk_per_row: round(median(of((r) => r.drain.bytesPerRow))),
        all_stored: runs.every((r) => r.drain.allStored)
          ? 'yes'
          : `NO (${runs.map((r) => `${r.drain.stored}/${r.drain.backlog}`).join(', ')})`,
      },
    };
    const replicaRows = await runReplicaRounds({
      databases,
      rounds,
      windowMs: x.windowMs,
      warmup,
      bodies,
    });
    return [copyRow, directRow, ingestRow, drainRow, ...replicaRows];
  } finally {
    await Promise.all(x.processes.map((p) => p.stop()));
    const nc = await connect({ servers: natsUrl(), timeout: 3000 }).catch(() => null);
    if (nc) {
      const jsm = await jetstreamManager(nc);
      for (const stream of x.streams) {
        for (const name of [stream, `${stream}_DEAD`]) await jsm.streams.delete(name).catch(() => undefined);
      }
      await nc.close();
    }
    await databases.dropAll();
  }
}

/** `node dist/test/bench/queue.js`: this suite alone, as a table on stdout. */
if (require.main === module) {
  const started = performance.now();
  runQueueBench().then(
    (rows) => {
      for (const r of rows) {
        const ratio =
          r.ratio !== undefined
            ? ` (${round(r.ratio)} × ${r.baseline}; target ${r.target ?? '—'}: ${r.met === undefined ? '—' : r.met ? 'met' : 'MISSED'})`
            : '';
        process.stdout.write(
          `${r.name}: ${round(r.value)} ${r.unit}${ratio} ${JSON.stringify(r.extra ?? {})}\n`,
        );
      }
      process.stdout.write(`took ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(
        `queue bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exit(1);
    },
  );
}
