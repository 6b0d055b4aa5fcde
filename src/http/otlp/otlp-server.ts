import type { Server } from 'node:http';
import type { Config } from '../../config/load';
import type { ShedRule } from '../../intake/shed-rule';
import type { Logger } from '../../log/logger';
import type { IntakeMetrics } from '../../metrics/intake-instruments';
import type { Metrics } from '../../metrics/instruments';
import type { OtlpMetrics } from '../../metrics/otlp-instruments';
import type { OtlpExportService } from '../../otlp/export-service';
import type { ApiKeyRing } from '../../auth/api-keys';
import type { RefusalEpisodes } from '../refusal-episodes';
import { listen } from '../server';
import type { TurnOrder } from '../../intake/turn-order';
import { createOtlpListener } from './otlp-listener';
import { withOtlpOverloadGate } from './otlp-overload-gate';

/** What the OTLP receiver is wired to: its export service, the collector's intake and instruments. */
export interface OtlpServerDeps {
  readonly config: Pick<
    Config,
    | 'host'
    | 'otlpPort'
    | 'otlpMaxBodyBytes'
    | 'otlpMaxJsonDepth'
    | 'keepAliveTimeoutMs'
    | 'headersTimeoutMs'
    | 'requestTimeoutMs'
  >;
  /** Maps an export and hands it to the intake. */
  readonly exports: Pick<OtlpExportService, 'export'>;
  /** The shed rule `POST /v1/events` uses. */
  readonly shed: Pick<ShedRule, 'refuseUnread' | 'hold'>;
  readonly keyRing: ApiKeyRing | null;
  readonly intakeMetrics: IntakeMetrics;
  readonly metrics: Metrics;
  readonly otlpMetrics: OtlpMetrics;
  readonly turns: Pick<TurnOrder, 'wait'>;
  /** True once shutdown began. */
  readonly draining: () => boolean;
  /** Where 503 refusals are logged, once per episode and route. */
  readonly refusals: RefusalEpisodes;
  readonly logger: Logger;
}

/** A listening OTLP receiver. */
export interface RunningOtlpServer {
  readonly server: Server;
  readonly url: string;
  readonly port: number;
  /** Stops accepting, closes idle connections, waits for the others (answers in flight close theirs). Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the OTLP/HTTP receiver on `SLUICE_OTLP_PORT` (the caller skips it when the port is 0): a
 * second listener in front of the same intake, behind the same overload gate decision.
 */
export async function startOtlpServer(deps: OtlpServerDeps): Promise<RunningOtlpServer> {
  const { config, otlpMetrics } = deps;
  const listener = createOtlpListener({
    exports: deps.exports,
    keyRing: deps.keyRing,
    intakeMetrics: deps.intakeMetrics,
    metrics: deps.metrics,
    otlpMetrics,
    maxBodyBytes: config.otlpMaxBodyBytes,
    maxJsonDepth: config.otlpMaxJsonDepth,
    turns: deps.turns,
    draining: deps.draining,
    refusals: deps.refusals,
    logger: deps.logger.child({ component: 'otlp' }),
  });
  const { server, port, url } = await listen(
    withOtlpOverloadGate(listener, deps.shed, otlpMetrics),
    config,
    config.otlpPort,
    { variable: 'SLUICE_OTLP_PORT', zeroTo: 'turn the OTLP receiver off' },
  );
  let closing: Promise<void> | null = null;
  return {
    server,
    url,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
