import { type Registry } from 'prom-client';
import { counter, gauge, histogram } from './define';

/**
 * Instruments of a SQLite storage (tier 1), fed by src/storage/sqlite: its write-ahead log, which
 * a worker thread checkpoints off the event loop. `mode` is `passive` or `truncate`.
 */
export function createSqliteMetrics(registry: Registry) {
  const callObservers: Array<() => void> = [];
  return {
    /** Runs `observe` at every scrape, before `longestCall` is read. */
    onCollectCalls(observe: () => void): void {
      callObservers.push(observe);
    },
    longestCall: gauge(
      registry,
      'sluice_sqlite_longest_call_seconds',
      'SQLite: the longest synchronous call on the event loop since the previous scrape (one write slice, loss-map write, read statement, job step or delete), during which every request waited; by call (write, outcomes, read, job, delete) and time: wall (as the event loop saw it) or running (without the waits of the main thread for a core, where the kernel tells them). 0 when no call of the kind ran.',
      ['call', 'time'],
      () => {
        for (const observe of callObservers) observe();
      },
    ),
    callDuration: histogram(
      registry,
      'sluice_sqlite_call_duration_seconds',
      'SQLite: duration of each synchronous call on the event loop, by call and time, as sluice_sqlite_longest_call_seconds labels them; the buckets above 0.05 count the calls that held requests longer than the collector’s target.',
      ['call', 'time'],
      [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    ),
    walBytes: gauge(
      registry,
      'sluice_sqlite_wal_bytes',
      'SQLite: size of the write-ahead log at its last checkpoint (frames × page size, bytes); the log starts again from its beginning once every frame is copied, and a checkpoint past SLUICE_SQLITE_WAL_MAX_BYTES empties it while the writer waits.',
    ),
    checkpointDuration: histogram(
      registry,
      'sluice_sqlite_checkpoint_duration_seconds',
      'SQLite: duration of a checkpoint of the write-ahead log in the checkpoint thread, by mode: passive (copies what it can, the writer goes on) or truncate (the log past SLUICE_SQLITE_WAL_MAX_BYTES, or at stop: the writer waits for it).',
      ['mode'],
      [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    ),
    checkpointsBusy: counter(
      registry,
      'sluice_sqlite_checkpoints_busy_total',
      'SQLite: checkpoints a lock kept from completing, by mode (tried again at the next pass).',
      ['mode'],
    ),
    checkpointThreadRestarts: counter(
      registry,
      'sluice_sqlite_checkpoint_thread_restarts_total',
      'SQLite: times the checkpoint thread died and was started again (a second later; meanwhile the write-ahead log only grows). The first death is logged.',
    ),
  };
}

export type SqliteMetrics = ReturnType<typeof createSqliteMetrics>;
