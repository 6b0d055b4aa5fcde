/**
 * What the collector's event loop went through in a window, from its own `GET /metrics`:
 * prom-client's default figures (`nodejs_eventloop_lag_*`, from `monitorEventLoopDelay`, emptied
 * at each scrape, so a scrape before and one after a window give the window's; and
 * `nodejs_gc_duration_seconds`, a histogram whose counts are subtracted), the overload gate's
 * refusals (`sluice_requests_rejected_total{code="overloaded"}`), and the reads that waited for
 * their turn while the writer was pressed (`sluice_storage_reads_deferred_*`).
 */

/** The counters of one scrape. */
interface LoopScrape {
  /** Young-generation collections (scavenges): count, seconds, and count at or under each bound (seconds). */
  readonly minorCount: number;
  readonly minorSeconds: number;
  readonly minorAtMost: ReadonlyMap<number, number>;
  /** Mark-compact collections (`kind="major"`). */
  readonly majorCount: number;
  readonly majorSeconds: number;
  readonly overloaded: number;
  readonly deferred: number;
  readonly deferredSeconds: number;
  readonly refusedIngestFirst: number;
  /** Event-loop delay since the previous scrape (seconds; NaN when absent). */
  readonly lagP99: number;
  readonly lagMax: number;
}

/** The window's figures, for a bench row's details. */
export interface LoopFigures {
  /** Event-loop delay over the window (ms, `monitorEventLoopDelay` at prom-client's 10 ms resolution). */
  readonly loop_delay_p99_ms: number;
  readonly loop_delay_max_ms: number;
  readonly scavenges: number;
  /** Scavenges that paused the loop longer than 5 ms, and 10 ms. */
  readonly scavenges_over_5ms: number;
  readonly scavenges_over_10ms: number;
  readonly scavenge_mean_ms: number;
  readonly mark_compacts: number;
  readonly gc_ms_per_s: number;
  /** Ingest requests the overload gate refused unread in the window. */
  readonly refused_overloaded: number;
}

/** The window's reads that yielded to a pressed writer (sums, so windows add up). */
export interface ReadDeferrals {
  /** Reads that waited for their turn, and how long in all (ms). */
  readonly deferred: number;
  readonly waitedMs: number;
  /** Reads refused because their turn did not come within the read timeout. */
  readonly refused: number;
}

/** What `LoopWindow.stop` gives. */
export interface WindowFigures {
  readonly loop: LoopFigures;
  readonly deferrals: ReadDeferrals;
}

function samples(text: string, name: string): Array<{ labels: string; value: number }> {
  const out: Array<{ labels: string; value: number }> = [];
  const re = new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm');
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out.push({ labels: m[1] ?? '', value: Number(m[2]) });
  }
  return out;
}

function one(text: string, name: string, labelPart = ''): number {
  const found = samples(text, name).find((s) => s.labels.includes(labelPart));
  return found?.value ?? NaN;
}

function parse(text: string): LoopScrape {
  const minorAtMost = new Map<number, number>();
  for (const s of samples(text, 'nodejs_gc_duration_seconds_bucket')) {
    if (!s.labels.includes('kind="minor"')) continue;
    const le = /le="([^"]+)"/.exec(s.labels)?.[1];
    if (le !== undefined && le !== '+Inf') minorAtMost.set(Number(le), s.value);
  }
  return {
    minorCount: one(text, 'nodejs_gc_duration_seconds_count', 'kind="minor"') || 0,
    minorSeconds: one(text, 'nodejs_gc_duration_seconds_sum', 'kind="minor"') || 0,
    minorAtMost,
    majorCount: one(text, 'nodejs_gc_duration_seconds_count', 'kind="major"') || 0,
    majorSeconds: one(text, 'nodejs_gc_duration_seconds_sum', 'kind="major"') || 0,
    overloaded: one(text, 'sluice_requests_rejected_total', 'code="overloaded"') || 0,
    deferred: one(text, 'sluice_storage_reads_deferred_total') || 0,
    deferredSeconds: one(text, 'sluice_storage_reads_deferred_seconds_total') || 0,
    refusedIngestFirst: one(text, 'sluice_storage_reads_refused_total', 'reason="ingest_first"') || 0,
    lagP99: one(text, 'nodejs_eventloop_lag_p99_seconds'),
    lagMax: one(text, 'nodejs_eventloop_lag_max_seconds'),
  };
}

async function scrape(origin: string): Promise<LoopScrape> {
  const res = await fetch(`${origin}/metrics`, { signal: AbortSignal.timeout(10_000) });
  return parse(await res.text());
}

const ms = (seconds: number): number => Math.round(seconds * 1e5) / 100;

/** Scrapes at `start()` and at `stop()`: the figures of the window between. */
export class LoopWindow {
  private before: LoopScrape | null = null;
  private startedAt = 0;

  constructor(private readonly origin: string) {}

  async start(): Promise<void> {
    this.before = await scrape(this.origin);
    this.startedAt = performance.now();
  }

  async stop(): Promise<WindowFigures> {
    const after = await scrape(this.origin);
    const seconds = (performance.now() - this.startedAt) / 1000;
    const b = this.before ?? after;
    const scavenges = after.minorCount - b.minorCount;
    const atMost = (le: number): number => (after.minorAtMost.get(le) ?? 0) - (b.minorAtMost.get(le) ?? 0);
    const loop: LoopFigures = {
      loop_delay_p99_ms: ms(after.lagP99),
      loop_delay_max_ms: ms(after.lagMax),
      scavenges,
      scavenges_over_5ms: scavenges - atMost(0.005),
      scavenges_over_10ms: scavenges - atMost(0.01),
      scavenge_mean_ms: scavenges > 0 ? ms((after.minorSeconds - b.minorSeconds) / scavenges) : 0,
      mark_compacts: after.majorCount - b.majorCount,
      gc_ms_per_s: ms(
        (after.minorSeconds - b.minorSeconds + after.majorSeconds - b.majorSeconds) / Math.max(seconds, 1e-3),
      ),
      refused_overloaded: after.overloaded - b.overloaded,
    };
    const deferrals: ReadDeferrals = {
      deferred: after.deferred - b.deferred,
      waitedMs: ms(after.deferredSeconds - b.deferredSeconds),
      refused: after.refusedIngestFirst - b.refusedIngestFirst,
    };
    return { loop, deferrals };
  }
}
