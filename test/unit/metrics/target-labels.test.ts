import { Registry } from 'prom-client';
import { createMetrics } from '../../../src/metrics/instruments';
import { createIntakeMetrics } from '../../../src/metrics/intake-instruments';
import { createOtlpMetrics } from '../../../src/metrics/otlp-instruments';
import { createQueueMetrics } from '../../../src/metrics/queue-instruments';
import { createSchedulerMetrics } from '../../../src/metrics/scheduler-instruments';
import { createSqliteMetrics } from '../../../src/metrics/sqlite-instruments';
import { createStorageMetrics, createStorageUpGauge } from '../../../src/metrics/storage-instruments';

/**
 * Prometheus gives every scraped series `job` and `instance` (its scrape target) and renames a
 * target's own label of either name to `exported_job` / `exported_instance`: a query by it would
 * then read the scrape's value. No instrument may carry one (docs/monitoring.md).
 */
describe('instrument labels', () => {
  it('never use the names Prometheus reserves for the scrape target', () => {
    const registry = new Registry();
    createMetrics(registry);
    createIntakeMetrics(registry);
    createOtlpMetrics(registry);
    createQueueMetrics(registry);
    createSchedulerMetrics(registry);
    createStorageMetrics(registry);
    createStorageUpGauge(registry);
    createSqliteMetrics(registry);
    const instruments = registry.getMetricsAsArray() as unknown as Array<{
      name: string;
      labelNames: readonly string[];
    }>;
    expect(instruments.length).toBeGreaterThan(50);
    const clashing = instruments
      .filter((m) => m.labelNames.some((l) => l === 'job' || l === 'instance' || l.startsWith('exported_')))
      .map((m) => `${m.name}{${m.labelNames.join(',')}}`);
    expect(clashing).toEqual([]);
    expect(instruments.find((m) => m.name === 'sluice_scheduler_runs_total')?.labelNames).toEqual([
      'job_name',
      'result',
    ]);
  });
});
