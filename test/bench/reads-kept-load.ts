/**
 * The `reads` suite's data set in a database of a given server: the kept one when it matches
 * (kept-database.ts), else loaded now (reads-load.ts) and recorded for the next run.
 */
import {
  currentSchema,
  readKept,
  recordKept,
  recreate,
  staleReason,
  urlOf,
  type KeptDataset,
} from './kept-database';
import { datasetDatabaseName, type ReadsDataset } from './reads-dataset';
import { loadDataset } from './reads-load';
import { mergeAllBlocks } from './merged-blocks';
import { runSql } from './pg-bench-db';

/**
 * ANALYZE of a reused data set. Each run's ingest windows add about a million events to today's
 * partition, and a cluster may run without autovacuum (this CI machine's has it off): seen after
 * six runs, today's partition held 3.7 million rows its statistics had never seen, the planner
 * counted an app's events there by a sequential scan, and `/v1/apps` took 4.4–5 s instead of 30 ms.
 */
async function analyze(url: string, progress: (message: string) => void): Promise<void> {
  const t0 = performance.now();
  await runSql(url, 'ANALYZE');
  progress(`reads: analyzed in ${Math.round((performance.now() - t0) / 1000)} s`);
}

export interface DatasetDatabase {
  /** URL of the data set's database. */
  readonly url: string;
  readonly kept: KeptDataset;
  /** Loaded by this run (false: a kept database was reused). */
  readonly loaded: boolean;
}

/**
 * The data set `d` in its database on the server of `adminUrl`, loaded now unless a kept one
 * matches. Loading gives up (rejects) after `loadMaxMs` of writing.
 */
export async function datasetDatabase(
  adminUrl: string,
  d: ReadsDataset,
  loadMaxMs: number,
  progress: (message: string) => void,
): Promise<DatasetDatabase> {
  const name = datasetDatabaseName(d);
  const url = urlOf(adminUrl, name);
  const found = await readKept(adminUrl, name);
  const stale = staleReason(found, d.events, d.seed, Date.now());
  if (found && stale === null) {
    progress(`reads: reusing database ${name} (loaded in ${Math.round(found.loadSeconds)} s)`);
    await mergeAllBlocks(url, (m) => progress(`reads: ${m}`));
    await analyze(url, progress);
    return { url, kept: found, loaded: false };
  }
  progress(`reads: loading ${d.events} events into ${name} (${stale})`);
  await recreate(adminUrl, name);
  // Whole minutes, so every window of the views starts and ends on a rollup bucket.
  const endMs = Math.floor(Date.now() / 60_000) * 60_000;
  const t0 = performance.now();
  const figures = await loadDataset(url, d, endMs, loadMaxMs, progress);
  const loadSeconds = (performance.now() - t0) / 1000;
  progress(
    `reads: loaded in ${Math.round(loadSeconds)} s (writing ${Math.round(figures.writeSeconds)} s, ` +
      `folding ${Math.round(figures.foldSeconds)} s, vacuum ${Math.round(figures.vacuumSeconds)} s)`,
  );
  const kept = { events: d.events, seed: d.seed, endMs, loadSeconds, schema: currentSchema() };
  await mergeAllBlocks(url, (m) => progress(`reads: ${m}`));
  await recordKept(url, kept);
  return { url, kept, loaded: true };
}
