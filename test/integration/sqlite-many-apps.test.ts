import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { errorEvent, metric } from '../support/events';
import { postEvents } from '../support/http';
import { tempSqlitePath } from '../support/postgres';
import { runAlone } from '../support/run-alone';

/** Distinct apps, one metric sample each. */
const APPS = 50_000;
/** Apps per request, as a relay sends them: each app's one sample is within its limit. */
const APPS_PER_REQUEST = 500;
/** Requests in flight at once while the apps are sent. */
const SENDERS = 4;
/** How often /readyz is asked (milliseconds). */
const PROBE_EVERY_MS = 100;
/** How often an error event is sent once the apps are in (milliseconds). */
const ERROR_EVERY_MS = 500;
/**
 * The bound on /readyz's p99 (milliseconds). /readyz answers from memory, so its latency is the
 * longest block it met plus the time to answer, plus the waits of the collector and this test for
 * the box's two cores. The file runs alone (`runAlone`): in a whole `npm test` on 7 December 2026
 * its p99 was 24 ms while the jobs ran and 149 ms while 50,000 apps were sent (one probe of 24),
 * 42 and 417 ms with one other process busy on the box; with other test files beside it (load
 * averages of 17 to 27) it was 146–775 ms whatever the build. The event loop's longest delay while
 * the apps are sent (96–383 ms) is not SQLite's: no SQLite call ran 50 ms in those runs.
 * Before the jobs worked in slices every /readyz took 28–39 s for minutes (p99 14.6 s). The 50 ms
 * property itself is asserted on the collector's own figure below, which the box's load does not move.
 */
const READYZ_P99_MS = 1000;
/**
 * The property "no job, write or read blocks the event loop for more than 50 ms" (milliseconds),
 * read from `sluice_sqlite_call_duration_seconds{time="running"}`: each synchronous SQLite call's
 * time without the main thread's waits for a core, which on this shared box are most of a call's
 * wall time when it is busy. What is left still holds the box's I/O stalls and garbage
 * collections: in those runs 0 to 3 calls of about 700 ran longer than 50 ms, the longest 107 ms.
 */
const LOOP_BLOCK_MS = 50;
/** The share of SQLite calls that may run longer than `LOOP_BLOCK_MS` (the box's stalls). */
const OVER_BLOCK_SHARE = 0.01;
/** No SQLite call may run longer than this (milliseconds): a statement that is not sliced takes seconds here. */
const LONGEST_CALL_MS = 250;
/** SQLite's calls on the event loop, as `sluice_sqlite_longest_call_seconds` labels them. */
const CALLS = ['write', 'outcomes', 'read', 'job', 'delete'] as const;
/** The bound of the whole test. */
const MAX_TEST_MS = 180_000;
/** The bounds of its phases (from its start), so that it fails with its figures, not a timeout. */
const SEND_DEADLINE_MS = 80_000;
const JOBS_DEADLINE_MS = 150_000;
/** The longest any one request may take before it counts as unanswered (milliseconds). */
const REQUEST_TIMEOUT_MS = 10_000;

jest.setTimeout(MAX_TEST_MS);
// Its bounds are latencies: no other test file runs beside it (jest runs several at once).
runAlone();

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** The value of the first sample of /metrics whose line starts with `prefix`; 0 when absent. */
function sample(metrics: string, prefix: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/** The value of the sample of /metrics named `name` whose labels include each of `labels`; 0 when absent. */
function sampleWith(metrics: string, name: string, labels: Record<string, string>): number {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = metrics.split('\n').find((l) => l.startsWith(`${name}{`) && pairs.every((p) => l.includes(p)));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

function latencies(ms: readonly number[]): Record<string, number> {
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    probes: sorted.length,
    p50: Math.round(percentile(sorted, 50)),
    p99: Math.round(percentile(sorted, 99)),
    max: Math.round(sorted[sorted.length - 1] ?? NaN),
  };
}

/**
 * A SQLite collector with the defaults a user gets takes one metric sample from each of 50,000
 * apps, then its jobs fold them (downsample: 50,000 1m and 1h buckets; loss-map compaction: the
 * accepted and stored counts of 50,000 apps in one minute) while lists of apps and metric names
 * are read. Meanwhile /readyz answers within its bound and every error event is taken: no job,
 * write or read holds the event loop.
 */
describe('a SQLite collector with 50,000 apps', () => {
  let c: CollectorProcess | undefined;

  afterAll(async () => {
    if (c === undefined) return;
    // A collector frozen by a job would hold its shutdown for minutes: the bound of this test.
    const killed = setTimeout(() => c?.child.kill('SIGKILL'), 15_000);
    await c.stop();
    clearTimeout(killed);
  });

  it('answers /readyz in time and takes every error event while its jobs fold the apps', async () => {
    const started = Date.now();
    c = await startCollectorProcess(
      {
        SLUICE_SQLITE_PATH: tempSqlitePath('many_apps'),
        // The default bound (10,000 new apps a minute) would refuse most of these names at once; a
        // collector reaches as many apps in 5 minutes at that bound, or at once when it is
        // raised, and storage must hold them either way.
        SLUICE_MAX_APPS_PER_MINUTE: '0',
      },
      { defaults: 'user' },
    );
    const url = c.url;

    // /readyz from the start; error events once the apps are in (while they are sent, the four
    // senders saturate the collector and it sheds requests unread, errors too: by design).
    let phase: 'sending' | 'jobs' = 'sending';
    const readyz = { sending: [] as number[], jobs: [] as number[] };
    const errorAnswers: string[] = [];
    let longestLoopDelayS = 0;
    /** The longest step of each job's runs (`sluice_scheduler_longest_slice_seconds`). */
    const longestSliceMs: Record<string, number> = {};
    /** The longest SQLite call of each kind on the event loop: its wall time, and without the waits for a core. */
    const longestCallMs = { wall: {} as Record<string, number>, running: {} as Record<string, number> };
    /** SQLite calls on the event loop of each kind, and those that ran (without waits for a core) longer than the bound. */
    const calls = { all: {} as Record<string, number>, over: {} as Record<string, number> };
    /** The write-ahead log: its largest size seen (bytes) and the TRUNCATE checkpoints its bound took. */
    const wal = { maxBytes: 0, truncates: 0 };
    const pending: Promise<void>[] = [];
    const probe = setInterval(() => {
      const at = phase;
      const t0 = performance.now();
      pending.push(
        fetch(`${url}/readyz`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).then(
          async (res) => {
            await res.arrayBuffer();
            readyz[at].push(res.status === 200 ? performance.now() - t0 : Infinity);
          },
          () => void readyz[at].push(Infinity),
        ),
      );
    }, PROBE_EVERY_MS);
    let errors: NodeJS.Timeout | undefined;
    /** Requests of the senders that got no answer in time: each stops its sender. */
    const unanswered: string[] = [];
    const listAnswers: string[] = [];
    let jobsDone = false;

    try {
      // Samples of a minute already settled, so the loss-map compaction folds it in this test.
      const ts = Math.floor(Date.now() / 60_000) * 60_000 - 120_000;
      let next = 0;
      const sender = async (): Promise<void> => {
        while (next < APPS && Date.now() - started < SEND_DEADLINE_MS) {
          const from = next;
          next += APPS_PER_REQUEST;
          const batch = Array.from({ length: Math.min(APPS_PER_REQUEST, APPS - from) }, (_, i) =>
            metric(`app-${from + i}`, { ts: ts + ((from + i) % 60_000) }),
          );
          // Bounded: a request shed unread is sent again at most a few times.
          for (let attempt = 0; ; attempt++) {
            const a = await postEvents(url, batch, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }).catch(
              (err: unknown) =>
                void unanswered.push(`${Math.round((Date.now() - started) / 1000)} s: ${String(err)}`),
            );
            if (a === undefined) return;
            if (a.status === 202) {
              expect(a.body.accepted).toBe(batch.length);
              break;
            }
            expect(a.status).toBe(429);
            expect(attempt).toBeLessThan(20);
            await new Promise((r) => setTimeout(r, 250));
          }
        }
      };
      await Promise.all(Array.from({ length: SENDERS }, sender));
      // A collector that stopped answering fails below, on the figures so far.
      if (unanswered.length === 0 && next >= APPS) {
        const sentAt = Date.now();
        phase = 'jobs';
        errors = setInterval(() => {
          pending.push(
            postEvents(url, [errorEvent('watched-app')], {
              signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
            }).then(
              (a) => void errorAnswers.push(`${a.status} ${a.body.accepted ?? a.body.error}`),
              (err: unknown) => void errorAnswers.push(String(err)),
            ),
          );
        }, ERROR_EVERY_MS);

        // Lists read while the jobs run (each a page, answered or refused, never held).
        const lists = (async () => {
          for (let i = 0; i < 5; i++) {
            const window = `from=${ts - 3_600_000}&to=${Date.now()}`;
            for (const path of ['/v1/apps', '/v1/metrics/names']) {
              const res = await fetch(`${url}${path}?${window}`, {
                signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
              }).catch((err: unknown) => String(err));
              listAnswers.push(typeof res === 'string' ? `${path} ${res}` : `${path} ${res.status}`);
              if (typeof res !== 'string') await res.arrayBuffer();
            }
            await new Promise((r) => setTimeout(r, 2000));
          }
        })();

        // Every bucket folded into 1m and 1h rollups, and the loss-map minute compacted (the accepted
        // and stored counts of each app). Asked once a second: /metrics costs the collector too.
        while (!jobsDone && Date.now() - started < JOBS_DEADLINE_MS) {
          const metrics = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
            .then((res) => res.text())
            .catch(() => '');
          // The longest event-loop delay the collector saw since the last scrape (prom-client's).
          longestLoopDelayS = Math.max(
            longestLoopDelayS,
            sample(metrics, 'nodejs_eventloop_lag_max_seconds'),
          );
          wal.maxBytes = Math.max(wal.maxBytes, sample(metrics, 'sluice_sqlite_wal_bytes'));
          wal.truncates = sample(metrics, 'sluice_sqlite_checkpoint_duration_seconds_count{mode="truncate"}');
          for (const call of CALLS) {
            const running = { call, time: 'running' };
            const all = sampleWith(metrics, 'sluice_sqlite_call_duration_seconds_count', running);
            const within = sampleWith(metrics, 'sluice_sqlite_call_duration_seconds_bucket', {
              ...running,
              le: String(LOOP_BLOCK_MS / 1000),
            });
            calls.all[call] = all;
            calls.over[call] = all - within;
            for (const time of ['wall', 'running'] as const) {
              const v = sample(metrics, `sluice_sqlite_longest_call_seconds{call="${call}",time="${time}"}`);
              longestCallMs[time][call] = Math.max(longestCallMs[time][call] ?? 0, Math.round(v * 1000));
            }
          }
          for (const job of ['downsample', 'compact_outcomes']) {
            const s = sample(metrics, `sluice_scheduler_longest_slice_seconds{job_name="${job}"}`);
            longestSliceMs[job] = Math.max(longestSliceMs[job] ?? 0, Math.round(s * 1000));
          }
          jobsDone =
            sample(metrics, 'sluice_scheduler_rows_total{job_name="downsample"}') >= 2 * APPS &&
            sample(metrics, 'sluice_scheduler_rows_total{job_name="compact_outcomes"}') >= 2 * APPS;
          if (!jobsDone) await new Promise((r) => setTimeout(r, 1000));
        }
        await lists;
        console.log(`sent in ${sentAt - started} ms; jobs done ${Date.now() - sentAt} ms later`);
      }
    } finally {
      clearInterval(probe);
      clearInterval(errors);
      await Promise.all(pending);
      const figures = {
        sending: latencies(readyz.sending),
        jobs: latencies(readyz.jobs),
        errorEvents: errorAnswers.length,
        longestLoopDelayMs: Math.round(longestLoopDelayS * 1000),
        longestSliceMs,
        longestCallMs,
        calls,
        wal,
      };
      console.log(`/readyz latency (ms): ${JSON.stringify(figures)}`);
    }
    expect(latencies([...readyz.sending, ...readyz.jobs]).p99).toBeLessThan(READYZ_P99_MS);
    expect(unanswered).toEqual([]);
    expect(errorAnswers.length).toBeGreaterThan(10);
    expect(errorAnswers.filter((a) => a !== '202 1')).toEqual([]);
    expect(latencies(readyz.jobs).p99).toBeLessThan(READYZ_P99_MS);
    expect(listAnswers.filter((a) => !/ (200|503)$/.test(a))).toEqual([]);
    expect(jobsDone).toBe(true);
    for (const job of ['downsample', 'compact_outcomes']) {
      expect(longestSliceMs[job]).toBeGreaterThan(0);
      expect(longestSliceMs[job]).toBeLessThan(READYZ_P99_MS);
    }
    // Every kind of call that ran was timed; hardly any held the loop past the bound, none for long.
    for (const call of ['write', 'outcomes', 'read', 'job'] as const) {
      expect(calls.all[call]).toBeGreaterThan(0);
    }
    const all = Object.values(calls.all).reduce((a, b) => a + b, 0);
    const over = Object.values(calls.over).reduce((a, b) => a + b, 0);
    expect(over).toBeLessThanOrEqual(Math.floor(all * OVER_BLOCK_SHARE));
    expect(Math.max(...Object.values(longestCallMs.running))).toBeLessThan(LONGEST_CALL_MS);
  });
});
