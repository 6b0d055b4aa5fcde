import type { Config } from '../config/load';
import type { Logger } from '../log/logger';

/** `sluice worker`: drains the JetStream stream into PostgreSQL (compose/worker.ts) until SIGTERM or SIGINT. */
export async function runWorker(config: Config, logger: Logger): Promise<void> {
  const { startWorker } = await import('../compose/worker');
  const worker = await startWorker(config, { logger });
  process.on('SIGTERM', () => worker.shutdown('SIGTERM'));
  process.on('SIGINT', () => worker.shutdown('SIGINT'));
}
