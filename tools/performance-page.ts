/**
 * Writes docs/performance.md from docs/bench/latest.json (the bench's recorded rows, suite by
 * suite) and docs/bench/suites.md (what each suite measures and how to run it):
 * `npm run build && node dist/tools/performance-page.js`. test/unit/docs/performance-page.test.ts
 * fails when the page differs from what this writes.
 */
import path from 'node:path';
import { writePerformancePage } from './performance-page/page-files';
import { repoRoot } from './repo-root';

const file = path.join(repoRoot(), 'docs', 'performance.md');
writePerformancePage(repoRoot());
process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);
