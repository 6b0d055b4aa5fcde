import { Counter, Gauge, type Registry } from 'prom-client';
import { gauge } from './define';

/** Instruments of the storage's PostgreSQL pools, fed by src/storage/postgres. Labels are fixed sets. */
export function createStorageMetrics(registry: Registry) {
  const r = [registry];
  const poolObservers: Array<() => void> = [];
  return {
    /** Runs `observe` at every scrape, before the pool gauge is read. */
    onCollectPools(observe: () => void): void {
      poolObservers.push(observe);
    },
    readsRefused: new Counter({
      name: 'sluice_storage_reads_refused_total',
      help: 'Reads refused with 503, by reason: pool_full (storage_busy: no read connection freed within SLUICE_PG_READ_WAIT_MS), timeout (storage_busy: the read ran past SLUICE_PG_READ_TIMEOUT_MS), ingest_first (storage_busy: the writer was pressed and the read’s turn did not come within SLUICE_PG_READ_TIMEOUT_MS) or unavailable (storage_unavailable: PostgreSQL unreachable, stopped, paused or failing).',
      labelNames: ['reason'] as const,
      registers: r,
    }),
    readsDeferred: new Counter({
      name: 'sluice_storage_reads_deferred_total',
      help: 'Reads on the primary that waited for their turn because the writer was pressed (ingest has precedence; SLUICE_PG_READ_SHARE_PERCENT).',
      registers: r,
    }),
    readsDeferredSeconds: new Counter({
      name: 'sluice_storage_reads_deferred_seconds_total',
      help: 'Time reads on the primary waited for their turn while the writer was pressed (seconds).',
      registers: r,
    }),
    writerPressed: new Gauge({
      name: 'sluice_storage_writer_pressed',
      help: '1 while the writer is pressed (a write in flight at least half of the last second or so) and reads on the primary yield to it, else 0; read at each scrape.',
      registers: r,
    }),
    poolConnections: new Gauge({
      name: 'sluice_storage_pool_connections',
      help: 'Connections of each PostgreSQL pool (writer, read, health, maintenance), by state: busy, idle, or waiting (callers queued for one).',
      labelNames: ['pool', 'state'] as const,
      registers: r,
      collect: () => {
        for (const observe of poolObservers) observe();
      },
    }),
  };
}

export type StorageMetrics = ReturnType<typeof createStorageMetrics>;

/**
 * Instruments of the read standby (src/storage/postgres/read-standby.ts), made only when one is
 * configured (`SLUICE_DATABASE_READ_URL`): without one, no `sluice_read_standby_*` series exists.
 */
export function createReadStandbyMetrics(registry: Registry) {
  const r = [registry];
  return {
    readsRouted: new Counter({
      name: 'sluice_read_standby_routes_total',
      help: 'Requests of the read API with a read standby configured (SLUICE_DATABASE_READ_URL), by where their reads went (a request whose read the standby failed counts again for the primary): source (standby or primary) and, for the primary, reason: standby_down, standby_lagging (past SLUICE_READ_STANDBY_MAX_LAG_MS), not_replayed (the last acknowledged commit was not replayed within the wait), commit_unknown, replay_conflict (replay cancelled the read on the standby); none for the standby.',
      labelNames: ['source', 'reason'] as const,
      registers: r,
    }),
    standbyUp: new Gauge({
      name: 'sluice_read_standby_up',
      help: '1 when the read standby (SLUICE_DATABASE_READ_URL) is reachable and in recovery at its last check, else 0.',
      registers: r,
    }),
    standbyLagSeconds: new Gauge({
      name: 'sluice_read_standby_lag_seconds',
      help: 'Replication lag of the read standby at its last check (seconds): 0 when it has replayed all the primary wrote, else the age of what it has not replayed; -1 when unknown (down, or the primary did not answer).',
      registers: r,
    }),
    standbyLagBytes: new Gauge({
      name: 'sluice_read_standby_lag_bytes',
      help: 'WAL the primary wrote that the read standby has not replayed, at its last check (bytes); -1 when unknown.',
      registers: r,
    }),
  };
}

export type ReadStandbyMetrics = ReturnType<typeof createReadStandbyMetrics>;

/**
 * `sluice_storage_up`, made only by a process that writes to storage: a collector of tiers 1–3
 * and a worker. An ingest collector (tier 4) writes nothing and exports no such series, so
 * `sum(sluice_storage_up)` counts the writers that can write (docs/monitoring.md).
 */
export function createStorageUpGauge(registry: Registry): Gauge {
  return gauge(
    registry,
    'sluice_storage_up',
    '1 when this process can write to storage: the background check reaches it and writes are not failing (0 from a failed write until the next commit). Exported by collectors that write (tiers 1-3) and by workers (tier 4), not by ingest collectors.',
  );
}
