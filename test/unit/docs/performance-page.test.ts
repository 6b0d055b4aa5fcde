import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RecordedResults } from '../../../test/bench/results-file';
import { performancePage } from '../../../tools/performance-page/page-files';
import { renderPerformancePage } from '../../../tools/performance-page/render';
import { parseSuiteProse } from '../../../tools/performance-page/suite-prose';

const ROOT = path.resolve(__dirname, '../../..');
const FIX =
  'run `npm run build && node dist/tools/performance-page.js` to write it from docs/bench/latest.json';

const run = {
  startedAt: '2026-12-07T01:00:00.000Z',
  finishedAt: '2026-12-07T01:10:00.000Z',
  quick: false,
  host: { cpus: 2, node: 'v20.0.0', httpClient: 'undici', loadavg: { min: 1, max: 2, mean: 1.5 } },
};

/** docs/performance.md is generated from the recorded bench results: it cannot drift from them. */
describe('the performance page', () => {
  it('is what docs/bench/latest.json and docs/bench/suites.md make', () => {
    const page = readFileSync(path.join(ROOT, 'docs', 'performance.md'), 'utf8');
    expect({ page, fix: FIX }).toEqual({ page: performancePage(ROOT), fix: FIX });
  });

  it('gives every recorded suite a table, described or not', () => {
    const results: RecordedResults = {
      suites: {
        reads: {
          run,
          rows: [
            { suite: 'reads', name: 'events page, 1M rows', value: 12.5, unit: 'ms' },
            {
              suite: 'reads',
              name: 'events page, keyset',
              value: 3.2,
              unit: 'ms',
              baseline: 'events page, 1M rows',
              ratio: 0.256,
              target: '≤ 10 ms',
              met: true,
            },
          ],
        },
      },
      failures: {},
    };
    const page = renderPerformancePage(results, parseSuiteProse('Intro.\n'));
    expect(page).toContain('## reads (`reads` suite)');
    expect(page).toContain(
      '| events page, keyset  | 3.20 ms | 0.26 × | events page, 1M rows | ≤ 10 ms | yes |',
    );
  });

  it('says plainly when a suite comes from a quick run', () => {
    const results: RecordedResults = {
      suites: {
        otlp: { run: { ...run, quick: true }, rows: [{ suite: 'otlp', name: 'x', value: 1, unit: 'ms' }] },
      },
      failures: {},
    };
    expect(renderPerformancePage(results, parseSuiteProse(''))).toMatch(/a quick run \(`BENCH_QUICK=1`\)/);
  });
});
