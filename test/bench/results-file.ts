import { mkdir, writeFile } from 'node:fs/promises';
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
