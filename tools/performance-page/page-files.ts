import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RecordedResults } from '../../test/bench/results-file';
import { renderPerformancePage } from './render';
import { parseSuiteProse } from './suite-prose';

/** docs/performance.md as generated from the recorded results and suites.md under `root`. */
export function performancePage(root: string): string {
  const results = JSON.parse(
    readFileSync(path.join(root, 'docs', 'bench', 'latest.json'), 'utf8'),
  ) as RecordedResults;
  const prose = parseSuiteProse(readFileSync(path.join(root, 'docs', 'bench', 'suites.md'), 'utf8'));
  return renderPerformancePage(results, prose);
}

/** Writes docs/performance.md under `root` from its recorded results and suites.md. */
export function writePerformancePage(root: string): void {
  writeFileSync(path.join(root, 'docs', 'performance.md'), performancePage(root));
}
