import { EventGenerator, seededRandom, type WireEvent } from './workload';

/** The data set the `reads` suite reads: how many events, of how many apps, over how long. */
export interface ReadsDataset {
  /** Events stored (every type of the bench's mix). */
  readonly events: number;
  /** Apps `app-0` … `app-<apps-1>`, each an even share of the events. */
  readonly apps: number;
  /** Days the events span, ending at the data set's end. */
  readonly days: number;
  /** Seed of the event generator: the same seed and size make the same events. */
  readonly seed: number;
}

const DAY_MS = 86_400_000;
const DEFAULT_EVENTS = 10_000_000;
const QUICK_EVENTS = 100_000;

/**
 * The data set of this run: 10 apps over 7 days, 10 million events (`BENCH_READS_EVENTS` sets
 * another size, e.g. 50000000; `BENCH_QUICK` 100,000 unless that is given).
 */
export function readsDataset(env: NodeJS.ProcessEnv, quick: boolean): ReadsDataset {
  const given = Number(env.BENCH_READS_EVENTS ?? NaN);
  const events = Number.isInteger(given) && given > 0 ? given : quick ? QUICK_EVENTS : DEFAULT_EVENTS;
  return { events, apps: 10, days: 7, seed: 43 };
}

/**
 * The suite its rows are recorded under: `reads` for the default size (and a quick run), else
 * `reads-<size>` (e.g. `reads-50m`), so an opt-in size's figures stand beside the default's.
 */
export function readsSuiteName(d: ReadsDataset, quick: boolean): string {
  if (quick || d.events === DEFAULT_EVENTS) return 'reads';
  const size = d.events >= 1_000_000 ? `${d.events / 1_000_000}m` : `${d.events / 1000}k`;
  return `reads-${size.replace('.', '_')}`;
}

/** The name of the database kept for this data set between runs, e.g. `sluice_bench_reads_10000000`. */
export function datasetDatabaseName(d: ReadsDataset): string {
  return `sluice_bench_reads_${d.events}_a${d.apps}_d${d.days}_s${d.seed}`;
}

export function appName(i: number): string {
  return `app-${i}`;
}

/**
 * The data set's events number `from` up to `to` (exclusive), in ts order: event i is at
 * `start + ⌊i × span / events⌋` (minus up to a second, as the bench's generator places it), of a
 * pseudo-random app, with the bench's mix of types (70 % metric samples, 10 % each lifecycle, log,
 * error). A slice has the same types, names, apps and times for the same bounds, seed and
 * `startMs`; ids are random UUID v7 of the event's time, so every load stores new rows.
 */
export function datasetEvents(d: ReadsDataset, startMs: number, from: number, to: number): WireEvent[] {
  const generator = new EventGenerator(d.seed * 1_000_003 + from);
  const apps = seededRandom(d.seed * 7_919 + from);
  const span = d.days * DAY_MS;
  const out: WireEvent[] = [];
  for (let i = from; i < to && i < d.events; i++) {
    const at = startMs + Math.floor((i * span) / d.events);
    const e = generator.next(at);
    const app = appName(Math.floor(apps() * d.apps) % d.apps);
    out.push({ ...e, source: { ...e.source, app } });
  }
  return out;
}

/** First millisecond of the data set that ends at `endMs`. */
export function datasetStart(d: ReadsDataset, endMs: number): number {
  return endMs - d.days * DAY_MS;
}
