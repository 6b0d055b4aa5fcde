import { mergeReport, type BenchReport, type RecordedResults } from '../../../test/bench/results-file';

const host = { cpus: 2, node: 'v20.0.0', httpClient: 'undici', loadavg: { min: 1, max: 2, mean: 1.5 } };
const report = (startedAt: string, rows: BenchReport['rows'], failures: BenchReport['failures'] = []) => ({
  startedAt,
  finishedAt: startedAt,
  quick: false,
  host,
  rows,
  failures,
});
const row = (suite: string, value: number) => ({ suite, name: `${suite} figure`, value, unit: 'ms' });

/** docs/bench/latest.json keeps, suite by suite, the rows of the last run that recorded it. */
describe('recording a bench run', () => {
  const empty: RecordedResults = { suites: {}, failures: {} };

  it('replaces the suites a run measured and keeps the others, new suites last', () => {
    const first = mergeReport(empty, report('t1', [row('otlp', 1), row('sentry', 2)]));
    const second = mergeReport(first, report('t2', [row('sentry', 3), row('reads', 4)]));
    expect(Object.keys(second.suites)).toEqual(['otlp', 'sentry', 'reads']);
    expect(second.suites.otlp).toEqual(first.suites.otlp);
    expect(second.suites.sentry?.rows).toEqual([row('sentry', 3)]);
    expect(second.suites.sentry?.run.startedAt).toBe('t2');
  });

  it('notes a failed suite until a later run measures it', () => {
    const failed = mergeReport(empty, report('t1', [], [{ suite: 'cluster', error: 'no haproxy\n  at x' }]));
    expect(failed.failures.cluster?.error).toBe('no haproxy');
    expect(mergeReport(failed, report('t2', [row('cluster', 1)])).failures).toEqual({});
  });
});
