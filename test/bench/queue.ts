/**
 * Tier 4 figures: accepted events/s of an ingest-mode collector (publish to JetStream, 202 after
 * the acks) against a direct-to-PostgreSQL collector on the same box and the same bodies, and the
 * workers' drain rate of the backlog that run left in the stream, as a ratio of raw COPY measured
 * in the same run. Bounded: about 40 s (BENCH_QUICK=1: about 20 s), 60 s at most.
 *
 * NATS: `BENCH_NATS_URL`, else `SLUICE_TEST_NATS_URL`, else nats://127.0.0.1:4222; the stream has
 * a name of this run alone and is deleted at the end.
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
import { CLI_SCRIPT, cleanEnv, startCollector } from './collector-process';
import { freePort } from '../../src/cluster/free-port';
import { createHttpClient } from './http-client';
import { runClosedLoop } from './load-closed';
import { ratePerSecond, statusCount, type LoadResult } from './load-result';
import { BenchDatabases, RowCounter } from './pg-bench-db';
import { figure, round, versus } from './rows';
import { startService, type ServiceProcess } from './service-process';
import { telemetryEvents } from './telemetry-events';
import type { BenchRow } from './types';
import { BodyCorpus, EventGenerator } from './workload';

const SUITE = 'queue';
/** Requests in flight in both closed loops. */
const CONCURRENCY = 16;
const WORKERS = 2;
const WORKER_BATCH = 2000;
/** Events per COPY transaction of the baseline (as the limits suite). */
const COPY_EVENTS_PER_TRANSACTION = 1000;
const WARMUP_REQUESTS = 100;
/** Longest wait for the workers to store the backlog (milliseconds). */
const DRAIN_TIMEOUT_MS = 20_000;
/** Bounds of this suite's own raw COPY baseline (events, milliseconds): a share of the 60 s budget. */
const COPY_MAX_EVENTS = 60_000;
const COPY_MAX_MS = 5000;

/** Node flags of the processes under test: `--cpu-prof` into `BENCH_QUEUE_PROFILE_DIR` when set. */
function profileArgs(): string[] {
  const dir = process.env.BENCH_QUEUE_PROFILE_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

function natsUrl(): string {
  return process.env.BENCH_NATS_URL ?? process.env.SLUICE_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';
}

interface Intake {
  readonly load: LoadResult;
  readonly acceptedPerSecond: number;
  readonly acceptedTotal: number;
  /** The collector's CPU per event it accepted in the measured window (microseconds). */
  readonly cpuMicrosPerEvent: number;
}

/** Warm-up (not measured), then a closed loop over `bodies` for `ms`; returns what the server accepted. */
async function closedLoop(
  collector: ServiceProcess,
  warmup: BodyCorpus,
  bodies: BodyCorpus,
  ms: number,
): Promise<Intake> {
  const client = createHttpClient(collector.origin, CONCURRENCY);
  try {
    const warm = await runClosedLoop({
      client,
      path: '/v1/events',
      bodies: warmup.bodies.slice(0, WARMUP_REQUESTS),
      concurrency: CONCURRENCY,
      maxMs: 1500,
    });
    const cpuBefore = collector.sample().cpuSeconds;
    const load = await runClosedLoop({
      client,
      path: '/v1/events',
      bodies: bodies.bodies,
      concurrency: CONCURRENCY,
      maxMs: ms,
    });
    return {
      load,
      acceptedPerSecond: ratePerSecond(load, load.accepted),
      acceptedTotal: warm.accepted + load.accepted,
      cpuMicrosPerEvent: ((collector.sample().cpuSeconds - cpuBefore) * 1e6) / Math.max(1, load.accepted),
    };
  } finally {
    await client.close();
  }
}

function intakeExtra(r: Intake): Record<string, number | string> {
  const ok = r.load.latencyByStatus.get(202);
  return {
    concurrency: CONCURRENCY,
    cpu_us_per_event: round(r.cpuMicrosPerEvent),
    p50_ms: round(ok?.p50 ?? NaN),
    p99_ms: round(ok?.p99 ?? NaN),
    answered_429: `${round((statusCount(r.load, 429) / Math.max(1, r.load.requests)) * 100)}%`,
    not_2xx_4xx: r.load.requests - statusCount(r.load, 202) - statusCount(r.load, 429),
  };
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

export async function runQueueBench(): Promise<BenchRow[]> {
  const options = readBenchOptions();
  const windowMs = options.quick ? 1500 : 4000;
  const databases = new BenchDatabases(options.adminUrl);
  const stream = `SLUICE_BENCH_${process.pid}_${randomBytes(3).toString('hex')}`;
  const queueEnv = {
    SLUICE_NATS_URL: natsUrl(),
    SLUICE_NATS_STREAM: stream,
    SLUICE_NATS_SUBJECT_PREFIX: `sluice-bench.${stream}`,
    SLUICE_NATS_MAX_BYTES: '4GiB',
  };
  const warmup = new BodyCorpus(new EventGenerator(31), 100).ensure(WARMUP_REQUESTS * 100);
  // Enough bodies that both windows are bound by time, not by the corpus.
  const bodies = new BodyCorpus(new EventGenerator(32), 100).ensure(options.quick ? 40_000 : 120_000);
  const processes: ServiceProcess[] = [];
  const rows: BenchRow[] = [];
  try {
    const copyDb = await databases.fresh('queue_copy');
    const copied = await rawCopy(
      copyDb.url,
      sluiceCopyChunks(
        telemetryEvents(Math.min(options.copyEvents, COPY_MAX_EVENTS), 33),
        COPY_EVENTS_PER_TRANSACTION,
      ),
      Math.min(options.copyMaxMs, COPY_MAX_MS),
    );
    await databases.drop(copyDb);
    const copyRow = figure(SUITE, 'raw COPY, local client (this suite)', copied.eventsPerSecond, 'events/s', {
      events: copied.events,
    });

    const directDb = await databases.fresh('queue_direct');
    const direct = await startCollector({ databaseUrl: directDb.url, ack: 'queued' });
    processes.push(direct);
    const d = await closedLoop(direct, warmup, bodies, windowMs);
    await direct.stop();
    await databases.drop(directDb);
    const directRow = figure(
      SUITE,
      'direct collector (PostgreSQL), accepted',
      d.acceptedPerSecond,
      'events/s',
      {
        ...intakeExtra(d),
      },
    );

    const queueDb = await databases.fresh('queue_ingest');
    const ingest = await startCollector({
      databaseUrl: queueDb.url,
      ack: 'queued',
      extraEnv: { ...queueEnv, SLUICE_MODE: 'ingest' },
      nodeArgs: profileArgs(),
    });
    processes.push(ingest);
    // Workers off during the window: the burst piles up in the stream, as in the design.
    const i = await closedLoop(ingest, warmup, bodies, windowMs);
    const ingestRow = versus(
      SUITE,
      'ingest collector (JetStream), accepted',
      i.acceptedPerSecond,
      'events/s',
      directRow,
      2,
      { ...intakeExtra(i), workers: 'off during the window' },
    );

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
      try {
        const workers = await Promise.all(Array.from({ length: WORKERS }, () => startWorker(workerEnv)));
        processes.push(...workers);
        const cpu = (): number => workers.reduce((sum, w) => sum + w.sample().cpuSeconds, 0);
        const cpuBefore = cpu();
        timed = await drain.time(counter, DRAIN_TIMEOUT_MS);
        workerCpuSeconds = cpu() - cpuBefore;
      } finally {
        await drain.close();
      }
      // Every message acked means every event committed (ack after commit); the count confirms it.
      const total = i.acceptedTotal;
      const last = await counter.waitFor(total, 5000, 50);
      const stored = last.rows;
      const drainPerSecond =
        timed.endAt !== null && timed.endAt > timed.startAt
          ? (total - timed.rowsAtStart) / ((timed.endAt - timed.startAt) / 1000)
          : NaN;
      rows.push(
        copyRow,
        directRow,
        ingestRow,
        versus(
          SUITE,
          `workers drain the backlog (${WORKERS} workers)`,
          drainPerSecond,
          'events/s stored',
          copyRow,
          0.7,
          {
            backlog_events: total,
            batch: WORKER_BATCH,
            worker_cpu_us_per_event: round((workerCpuSeconds * 1e6) / Math.max(1, total)),
            all_stored: last.at !== null && timed.endAt !== null ? 'yes' : `NO (${stored}/${total})`,
          },
        ),
      );
    } finally {
      await counter.close();
    }
    return rows;
  } finally {
    await Promise.all(processes.map((p) => p.stop()));
    const nc = await connect({ servers: natsUrl(), timeout: 3000 }).catch(() => null);
    if (nc) {
      const jsm = await jetstreamManager(nc);
      for (const name of [stream, `${stream}_DEAD`]) await jsm.streams.delete(name).catch(() => undefined);
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
