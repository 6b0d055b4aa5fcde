/**
 * Ingest while readers loop over the read views, against ingest alone, on one collector in
 * alternating windows: at saturation (a closed loop: what reads take from ingest's throughput)
 * and at a steady rate well below it (an open loop: whether reads make ingest answer 429 or slow).
 * Each window also counts the CPU of the collector and of PostgreSQL's read and write backends.
 */
import { createHttpClient, type HttpClient } from './http-client';
import { runClosedLoop } from './load-closed';
import { runOpenLoop } from './load-open';
import { ratePerSecond, statusCount, type LoadResult } from './load-result';
import { PgBackendCpu } from './pg-backend-cpu';
import { sampleProcess } from './proc-stats';
import { LoopWindow, type LoopFigures, type ReadDeferrals } from './read-loop-figures';
import { quantile, timeRead } from './read-timing';
import type { ReadView } from './read-views';
import { figure, round, versus, bounded } from './rows';
import type { ServiceProcess } from './service-process';
import type { BenchRow } from './types';
import { BodyCorpus, EventGenerator, type RequestBody } from './workload';

const READERS = 8;
const INGEST_CONCURRENCY = 4;
/** The steady rate of the paced windows (events/s), in bodies of 10 events. */
const PACED_EVENTS_PER_SECOND = 500;
const PACED_BODY_EVENTS = 10;
const PACED_MAX_IN_FLIGHT = 64;

export interface IngestUnderReadsOptions {
  readonly suite: string;
  /** Row name prefix, e.g. `10M events`. */
  readonly label: string;
  /** Time bound of each window (milliseconds). */
  readonly windowMs: number;
  /** Count bound of each closed-loop window (events). */
  readonly windowEvents: number;
  /** Alternating rounds (alone, with readers) at saturation. */
  readonly rounds: number;
  readonly progress: (message: string) => void;
  /**
   * Where the readers' backend CPU is counted: by default the read pool (`sluice:read`) of the
   * database at `url`. With a read standby, its database and pool (`sluice:read_standby`); what the
   * primary's read pool still spends is then reported apart (`primary_pg_read_cpu_s_per_s`).
   */
  readonly readBackends?: { readonly url: string; readonly pool: string };
  /** Least ingest with readers ÷ ingest alone at saturation; null: reported, no target. Default 0.8. */
  readonly ratioTarget?: number | null;
}

interface ReadersFigures {
  readonly reads: number;
  readonly failed: number;
  readonly p50: number;
  readonly p95: number;
}

/** `READERS` loops over the views until `stopped()` (and at most a million reads). */
async function readLoop(
  origin: string,
  views: readonly ReadView[],
  stopped: () => boolean,
): Promise<ReadersFigures> {
  const times: number[] = [];
  let failed = 0;
  const reader = async (offset: number): Promise<void> => {
    for (let i = offset; !stopped() && times.length < 1_000_000; i++) {
      const v = views[i % views.length] as ReadView;
      try {
        const t = await timeRead(origin, v.path);
        times.push(t.ms);
        if (t.status !== 200) failed++;
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(
    Array.from({ length: READERS }, (_, r) => reader(Math.floor((r * views.length) / READERS))),
  );
  return { reads: times.length, failed, p50: quantile(times, 0.5), p95: quantile(times, 0.95) };
}

interface IngestWindow {
  readonly load: LoadResult;
  readonly seconds: number;
  readonly eventsPerSecond: number;
  readonly readers: ReadersFigures | null;
  readonly pgReadSeconds: number;
  /** With `readBackends`: the CPU of the primary's read pool, else 0. */
  readonly pgPrimaryReadSeconds: number;
  readonly pgWriteSeconds: number;
  /** The collector process's CPU seconds in the window (ingest and reads alike). */
  readonly collectorSeconds: number;
  /** The collector's event loop in the window: its delay, its collections, the overload gate's refusals. */
  readonly loop: LoopFigures;
  /** The reads that yielded to the pressed writer in the window. */
  readonly deferrals: ReadDeferrals;
}

/** One window of `drive` on a client of `connections`, with the readers looping when `views` is given. */
async function ingestWindow(
  collector: ServiceProcess,
  url: string,
  connections: number,
  views: readonly ReadView[] | null,
  drive: (client: HttpClient) => Promise<LoadResult>,
  eventsPerBody: number,
  readBackends?: IngestUnderReadsOptions['readBackends'],
): Promise<IngestWindow> {
  const client = createHttpClient(collector.origin, connections);
  const cpu = new PgBackendCpu(url);
  const readCpu = readBackends ? new PgBackendCpu(readBackends.url) : null;
  await cpu.start();
  await readCpu?.start();
  const loop = new LoopWindow(collector.origin);
  await loop.start();
  let done = false;
  const collectorBefore = sampleProcess(collector.pid).cpuSeconds;
  try {
    const reading = views ? readLoop(collector.origin, views, () => done) : Promise.resolve(null);
    const load = await drive(client);
    done = true;
    const readers = await reading;
    const { loop: loopFigures, deferrals } = await loop.stop();
    await cpu.stop();
    await readCpu?.stop();
    const byPool = cpu.byPool();
    const primaryRead = byPool.get('sluice:read') ?? 0;
    return {
      load,
      seconds: (load.endedAt - load.startedAt) / 1000,
      eventsPerSecond: ratePerSecond(load, statusCount(load, 202) * eventsPerBody),
      readers,
      pgReadSeconds: readCpu && readBackends ? (readCpu.byPool().get(readBackends.pool) ?? 0) : primaryRead,
      pgPrimaryReadSeconds: readCpu ? primaryRead : 0,
      pgWriteSeconds: byPool.get('sluice:writer') ?? 0,
      collectorSeconds: sampleProcess(collector.pid).cpuSeconds - collectorBefore,
      loop: loopFigures,
      deferrals,
    };
  } finally {
    done = true;
    await client.close();
  }
}

function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

const p99 = (w: IngestWindow): number => w.load.latency.p99;
const shed = (ws: readonly IngestWindow[]): number => ws.reduce((n, w) => n + statusCount(w.load, 429), 0);
const perSecond = (ws: readonly IngestWindow[], f: (w: IngestWindow) => number): number =>
  round(median(ws.map((w) => f(w) / w.seconds)));

/** What the readers did and cost in windows with readers. */
function readersExtra(ws: readonly IngestWindow[], o: IngestUnderReadsOptions): Record<string, number> {
  const reads = ws.reduce((n, w) => n + (w.readers?.reads ?? 0), 0);
  const pgReadCpu = ws.reduce((s, w) => s + w.pgReadSeconds, 0);
  return {
    reads_per_s: perSecond(ws, (w) => w.readers?.reads ?? 0),
    read_p50_ms: round(median(ws.map((w) => w.readers?.p50 ?? NaN))),
    read_p95_ms: round(median(ws.map((w) => w.readers?.p95 ?? NaN))),
    reads_failed: ws.reduce((n, w) => n + (w.readers?.failed ?? 0), 0),
    pg_read_cpu_ms_per_read: round((pgReadCpu * 1000) / Math.max(1, reads)),
    pg_read_cpu_s_per_s: perSecond(ws, (w) => w.pgReadSeconds),
    ...(o.readBackends && { primary_pg_read_cpu_s_per_s: perSecond(ws, (w) => w.pgPrimaryReadSeconds) }),
    ...deferralExtra(ws),
  };
}

/** Reads that waited for their turn while the writer was pressed, over every window. */
function deferralExtra(ws: readonly IngestWindow[]): Record<string, number> {
  const deferred = ws.reduce((n, w) => n + w.deferrals.deferred, 0);
  const waitedMs = ws.reduce((n, w) => n + w.deferrals.waitedMs, 0);
  return {
    reads_deferred: deferred,
    read_deferral_mean_ms: deferred > 0 ? round(waitedMs / deferred) : 0,
    reads_refused_ingest_first: ws.reduce((n, w) => n + w.deferrals.refused, 0),
  };
}

/** The loop figures of the window with the largest delay p99 (one window: its own). */
function loopExtra(ws: readonly IngestWindow[]): Record<string, number> {
  const worst = [...ws].sort((a, b) => b.loop.loop_delay_p99_ms - a.loop.loop_delay_p99_ms)[0];
  return worst === undefined ? {} : { ...worst.loop };
}

function bodies(events: number, perBody: number, seed: number): readonly RequestBody[] {
  // Made now: their events are newer than the data set's end, outside every view's window.
  return new BodyCorpus(new EventGenerator(seed), perBody).ensure(events).bodies;
}

/** At saturation: a closed loop of `INGEST_CONCURRENCY` connections, alone and with readers. */
export async function saturated(
  collector: ServiceProcess,
  url: string,
  views: readonly ReadView[],
  o: IngestUnderReadsOptions,
): Promise<BenchRow[]> {
  const perWindow = Math.ceil(o.windowEvents / 100);
  const warmup = Math.ceil(perWindow / 5);
  const corpus = bodies(100 * (warmup + 2 * o.rounds * perWindow), 100, 4343);
  const slice = (k: number): readonly RequestBody[] =>
    corpus.slice(warmup + k * perWindow, warmup + (k + 1) * perWindow);
  const closed =
    (list: readonly RequestBody[], maxMs: number) =>
    (client: HttpClient): Promise<LoadResult> =>
      runClosedLoop({ client, path: '/v1/events', bodies: list, concurrency: INGEST_CONCURRENCY, maxMs });
  // Warm-up (JIT, pools, today's partitions), not measured.
  await ingestWindow(
    collector,
    url,
    INGEST_CONCURRENCY,
    null,
    closed(corpus.slice(0, warmup), 3000),
    100,
    o.readBackends,
  );
  const alone: IngestWindow[] = [];
  const withReaders: IngestWindow[] = [];
  for (let r = 0; r < o.rounds; r++) {
    o.progress(`reads: ingest alone, round ${r + 1}`);
    alone.push(
      await ingestWindow(
        collector,
        url,
        INGEST_CONCURRENCY,
        null,
        closed(slice(2 * r), o.windowMs),
        100,
        o.readBackends,
      ),
    );
    o.progress(`reads: ingest with ${READERS} readers, round ${r + 1}`);
    withReaders.push(
      await ingestWindow(
        collector,
        url,
        INGEST_CONCURRENCY,
        views,
        closed(slice(2 * r + 1), o.windowMs),
        100,
        o.readBackends,
      ),
    );
  }
  const baseline = figure(
    o.suite,
    `${o.label}: ingest alone (closed loop, ${INGEST_CONCURRENCY} connections)`,
    round(median(alone.map((w) => w.eventsPerSecond))),
    'events/s',
    {
      rounds: o.rounds,
      p99_ms: round(median(alone.map(p99))),
      answered_429: shed(alone),
      collector_cpu_s_per_s: perSecond(alone, (w) => w.collectorSeconds),
      pg_writer_cpu_s_per_s: perSecond(alone, (w) => w.pgWriteSeconds),
      ...loopExtra(alone),
    },
  );
  const contended = versus(
    o.suite,
    `${o.label}: ingest while ${READERS} readers loop over the views`,
    round(median(withReaders.map((w) => w.eventsPerSecond))),
    'events/s',
    baseline,
    o.ratioTarget === undefined ? 0.8 : (o.ratioTarget ?? undefined),
    {
      p99_ms: round(median(withReaders.map(p99))),
      answered_429: shed(withReaders),
      collector_cpu_s_per_s: perSecond(withReaders, (w) => w.collectorSeconds),
      ...readersExtra(withReaders, o),
      pg_writer_cpu_s_per_s: perSecond(withReaders, (w) => w.pgWriteSeconds),
      ...loopExtra(withReaders),
    },
  );
  return [baseline, contended];
}

/** At a steady `PACED_EVENTS_PER_SECOND`: an open loop, alone and with readers, one window each. */
export async function paced(
  collector: ServiceProcess,
  url: string,
  views: readonly ReadView[],
  o: IngestUnderReadsOptions,
): Promise<BenchRow[]> {
  const requestsPerSecond = PACED_EVENTS_PER_SECOND / PACED_BODY_EVENTS;
  const perWindow = Math.ceil((requestsPerSecond * o.windowMs) / 1000);
  const corpus = bodies(2 * perWindow * PACED_BODY_EVENTS, PACED_BODY_EVENTS, 4344);
  const open =
    (list: readonly RequestBody[]) =>
    (client: HttpClient): Promise<LoadResult> =>
      runOpenLoop({
        client,
        path: '/v1/events',
        bodies: list,
        requestsPerSecond,
        maxMs: o.windowMs,
        maxInFlight: PACED_MAX_IN_FLIGHT,
      });
  const connections = 16;
  o.progress(`reads: ingest at ${PACED_EVENTS_PER_SECOND} events/s alone`);
  const alone = await ingestWindow(
    collector,
    url,
    connections,
    null,
    open(corpus.slice(0, perWindow)),
    PACED_BODY_EVENTS,
    o.readBackends,
  );
  o.progress(`reads: ingest at ${PACED_EVENTS_PER_SECOND} events/s with ${READERS} readers`);
  const busy = await ingestWindow(
    collector,
    url,
    connections,
    views,
    open(corpus.slice(perWindow)),
    PACED_BODY_EVENTS,
    o.readBackends,
  );
  const name = `${o.label}: ingest at a steady ${PACED_EVENTS_PER_SECOND} events/s (${PACED_BODY_EVENTS} a request)`;
  return [
    figure(o.suite, `${name}, alone: p99`, round(p99(alone)), 'ms', {
      p50_ms: round(alone.load.latency.p50),
      answered_429: shed([alone]),
      requests: alone.load.requests,
      collector_cpu_s_per_s: perSecond([alone], (w) => w.collectorSeconds),
      ...loopExtra([alone]),
    }),
    bounded(
      o.suite,
      `${name}, while ${READERS} readers loop: p99`,
      round(p99(busy)),
      'ms',
      'no 429 answer',
      shed([busy]) === 0,
      {
        p50_ms: round(busy.load.latency.p50),
        answered_429: shed([busy]),
        requests: busy.load.requests,
        collector_cpu_s_per_s: perSecond([busy], (w) => w.collectorSeconds),
        ...readersExtra([busy], o),
        ...loopExtra([busy]),
      },
    ),
  ];
}

/** The rows of both: at saturation, then at a steady rate. */
export async function ingestUnderReads(
  collector: ServiceProcess,
  url: string,
  views: readonly ReadView[],
  o: IngestUnderReadsOptions,
): Promise<BenchRow[]> {
  return [...(await saturated(collector, url, views, o)), ...(await paced(collector, url, views, o))];
}
