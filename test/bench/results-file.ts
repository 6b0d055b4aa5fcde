import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BenchRow } from './types';

/** What a run writes: its rows, how it ran, and what failed. */
export interface BenchReport {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly quick: boolean;
  readonly host: {
    readonly cpus: number;
    readonly node: string;
    readonly httpClient: string;
    /** 1-minute load average over the run: above the CPU count, other work shared the box. */
    readonly loadavg: { readonly min: number; readonly max: number; readonly mean: number };
  };
  readonly rows: readonly BenchRow[];
  /** Suites that could not run to the end, with why. */
  readonly failures: ReadonlyArray<{ readonly suite: string; readonly error: string }>;
}

/** Writes `bench-results/<ISO timestamp>.json` and `bench-results/latest.json`; returns the first path. */
export async function writeReport(folder: string, report: BenchReport): Promise<string> {
  await mkdir(folder, { recursive: true });
  const text = `${JSON.stringify(report, null, 2)}\n`;
  const file = path.join(folder, `${report.startedAt.replace(/:/g, '-')}.json`);
  await writeFile(file, text);
  await writeFile(path.join(folder, 'latest.json'), text);
  return file;
}

/** How a recorded suite's run ran: everything of its report but the rows and failures. */
export type RunInfo = Omit<BenchReport, 'rows' | 'failures'>;

/** One suite as the run that last recorded it measured it. */
export interface RecordedSuite {
  readonly run: RunInfo;
  readonly rows: readonly BenchRow[];
}

/**
 * docs/bench/latest.json: for each suite, the rows of the last run that recorded it, and the
 * suites whose last recording run failed. docs/performance.md is generated from it.
 */
export interface RecordedResults {
  readonly suites: Readonly<Record<string, RecordedSuite>>;
  readonly failures: Readonly<Record<string, { readonly run: RunInfo; readonly error: string }>>;
}

/**
 * `recorded` with the suites of `report` replaced by its rows (suites it did not run keep theirs;
 * new suites come last), and its failures noted by suite (cleared for the suites it ran to the end).
 */
export function mergeReport(recorded: RecordedResults, report: BenchReport): RecordedResults {
  const { rows, failures, ...run } = report;
  const suites: Record<string, RecordedSuite> = { ...recorded.suites };
  const measured = new Map<string, BenchRow[]>();
  for (const row of rows) measured.set(row.suite, [...(measured.get(row.suite) ?? []), row]);
  for (const [suite, suiteRows] of measured) suites[suite] = { run, rows: suiteRows };
  const failed: Record<string, { run: RunInfo; error: string }> = {};
  for (const [suite, entry] of Object.entries(recorded.failures))
    if (!measured.has(suite)) failed[suite] = entry;
  for (const f of failures) failed[f.suite] = { run, error: f.error.split('\n')[0] ?? '' };
  return { suites, failures: failed };
}

/** Merges `report` into the recorded results at `file` (created when missing). */
export async function recordReport(file: string, report: BenchReport): Promise<void> {
  let recorded: RecordedResults = { suites: {}, failures: {} };
  try {
    recorded = JSON.parse(await readFile(file, 'utf8')) as RecordedResults;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(mergeReport(recorded, report), null, 2)}\n`);
}
