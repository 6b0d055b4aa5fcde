import type { Config } from '../config/load';
import type { Logger } from '../log/logger';

/** `sluice migrate`: applies the storage's migrations and returns. */
export async function runMigrate(config: Config, logger: Logger): Promise<void> {
  const { migrateStorage } = await import('../compose/storage');
  await migrateStorage(config, logger);
}
