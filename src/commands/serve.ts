import type { Config } from '../config/load';
import type { Logger } from '../log/logger';

/** `sluice serve`: a collector (compose/collector.ts) until SIGTERM or SIGINT drains it. */
export async function runServe(config: Config, logger: Logger): Promise<void> {
  const { startCollector } = await import('../compose/collector');
  const collector = await startCollector(config, { logger });
  process.on('SIGTERM', () => collector.shutdown('SIGTERM'));
  process.on('SIGINT', () => collector.shutdown('SIGINT'));
}
