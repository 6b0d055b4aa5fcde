import { startCollector } from './collector-process';
import { READS_RETENTION_DAYS } from './reads-load';
import type { ServiceProcess } from './service-process';

/**
 * The `reads` suite's collector on the data set's database at `url`, keeping raw events as long as
 * the loader does (a kept data set is not purged); with `readUrl`, its reads go to that standby
 * (`SLUICE_DATABASE_READ_URL`).
 */
export function readsCollector(url: string, readUrl?: string): Promise<ServiceProcess> {
  return startCollector({
    databaseUrl: url,
    ack: 'queued',
    extraEnv: {
      SLUICE_RETENTION_RAW: `${READS_RETENTION_DAYS}d`,
      ...(readUrl !== undefined && { SLUICE_DATABASE_READ_URL: readUrl }),
    },
  });
}
