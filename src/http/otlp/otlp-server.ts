import type { Server } from 'node:http';
import type { Config } from '../../config/load';
import type { ShedRule } from '../../intake/shed-rule';
import type { Metrics } from '../../metrics/instruments';
import { listen } from '../server';
import { createOtlpListener, type OtlpListenerDeps } from './otlp-listener';
import { withOtlpOverloadGate } from './otlp-overload-gate';

/** What the OTLP receiver is wired to: its listener's dependencies, its settings and the shed rule. */
export interface OtlpServerDeps extends Omit<OtlpListenerDeps, 'maxBodyBytes' | 'maxJsonDepth' | 'metrics'> {
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
  /** The shed rule `POST /v1/events` uses. */
  readonly shed: Pick<ShedRule, 'refuseUnread' | 'hold'>;
  readonly metrics: Metrics;
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
