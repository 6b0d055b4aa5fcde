/**
 * Records bench reports (bench-results/<ISO>.json, as `npm run bench` writes them) into
 * docs/bench/latest.json, in the order given, suite by suite: for suites run one at a time, or a
 * quick run kept on purpose (`node dist/tools/bench-record.js bench-results/<a>.json …`). Then
 * `node dist/tools/performance-page.js` writes docs/performance.md.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { recordReport, type BenchReport } from '../test/bench/results-file';
import { repoRoot } from './repo-root';

async function main(files: readonly string[]): Promise<void> {
  if (files.length === 0) throw new Error('usage: bench-record <bench-results/…json> …');
  const recorded = path.join(repoRoot(), 'docs', 'bench', 'latest.json');
  for (const file of files) {
    await recordReport(recorded, JSON.parse(readFileSync(file, 'utf8')) as BenchReport);
    process.stdout.write(`recorded ${file}\n`);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
