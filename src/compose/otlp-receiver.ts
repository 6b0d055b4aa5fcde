/**
 * Assembly of the OTLP/HTTP receiver: part of the composition root. Its export service maps
 * exports to typed events and hands them to the collector's own intake.
 */
import type { Clock } from '../clock';
import type { Config } from '../config/load';
import { startOtlpServer, type OtlpServerDeps, type RunningOtlpServer } from '../http/otlp/otlp-server';
import type { IntakeService } from '../intake/intake-service';
import { createOtlpMetrics } from '../metrics/otlp-instruments';
import { OtlpExportService } from '../otlp/export-service';
import { eventLimits } from './storage';

/** The receiver's wiring besides its export service, which this builds. */
export type OtlpReceiverDeps = Omit<OtlpServerDeps, 'exports' | 'otlpMetrics'> & {
  readonly config: Config;
  readonly ingest: Pick<IntakeService, 'ingestValidated'>;
  readonly clock: Clock;
};

/** Starts the receiver on `SLUICE_OTLP_PORT`; null when that is 0 (off). */
export async function startOtlpReceiver(deps: OtlpReceiverDeps): Promise<RunningOtlpServer | null> {
  const { config } = deps;
  if (config.otlpPort === 0) return null;
  const otlpMetrics = createOtlpMetrics(deps.metrics.registry);
  const exports = new OtlpExportService({
    ingest: deps.ingest,
    limits: eventLimits(config),
    maxEventsPerCall: config.maxEventsPerRequest,
    retryAfterMaxSeconds: Math.floor(config.otlpRetryAfterMaxMs / 1000),
    clock: deps.clock,
    metrics: otlpMetrics,
  });
  return startOtlpServer({ ...deps, exports, otlpMetrics });
}
