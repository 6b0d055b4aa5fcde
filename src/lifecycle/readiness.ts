import type { Gauge } from 'prom-client';
import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import { withTimeout } from './with-timeout';

/**
 * What a process must reach to take traffic: storage (a collector writing directly, tiers 1–3)
 * or the JetStream stream (an ingest collector or a worker, tier 4).
 */
export type ReadinessDependency = 'storage' | 'jetstream';

/**
 * Readiness for traffic: its dependency up (storage reachable and taking writes, see
 * `StorageHealthMonitor`; JetStream, see `JetStreamMonitor`) and not draining. The dependency's
 * own gauge is set by its monitor: `sluice_storage_up`, `sluice_queue_nats_up`.
 */
export class Readiness {
  private dependencyReachable = false;
  private isDraining = false;

  constructor(
    private readonly metrics: Metrics,
    /** What `dependencyUp` is about. Default storage. */
    readonly dependency: ReadinessDependency = 'storage',
  ) {
    metrics.draining.set(0);
  }

  /** Whether the dependency is up (storage: reachable and its writes not failing). */
  get dependencyUp(): boolean {
    return this.dependencyReachable;
  }

  get draining(): boolean {
    return this.isDraining;
  }

  /** Why the collector is not ready, or null when it is. */
  notReadyReason(): 'draining' | `${ReadinessDependency}_unavailable` | null {
    if (this.isDraining) return 'draining';
    if (!this.dependencyReachable) return `${this.dependency}_unavailable`;
    return null;
  }

  setDependencyUp(up: boolean): void {
    this.dependencyReachable = up;
  }

  startDraining(): void {
    this.isDraining = true;
    this.metrics.draining.set(1);
  }
}

export interface StorageHealthOptions {
  readonly ping: () => Promise<void>;
  /** `sluice_storage_up` (`createStorageUpGauge`): 0 until the first check passes, then each result. */
  readonly gauge: Gauge;
  /** Readiness that follows storage (a collector of tiers 1–3); none for a worker, which follows JetStream. */
  readonly readiness?: Readiness;
  /** Interval between checks (milliseconds). */
  readonly intervalMs: number;
  /** A check slower than this counts as failed (milliseconds). */
  readonly timeoutMs: number;
  readonly logger: Logger;
}

/**
 * Storage is up when the background probe reaches it AND its writes are not failing: a database
 * that answers `SELECT 1` but refuses every write (a full disk, a read-only transaction) leaves a
 * writer that cannot write, which must not read as ready. The probe runs in the background so
 * `/readyz` answers from memory; the writer reports each commit and each failure (it is the
 * writer's `WriteHealth`, see src/writer/write-with-retry.ts), and the first commit after a
 * failure makes storage up again. Logs each transition once.
 */
export class StorageHealthMonitor {
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  private reachable = false;
  private writeFailing = false;

  constructor(private readonly o: StorageHealthOptions) {
    o.gauge.set(0);
  }

  /** Runs a first check, then keeps checking. Idempotent. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.check();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** A write committed. Called once per batch: cheap. */
  succeeded(): void {
    if (!this.writeFailing) return;
    this.writeFailing = false;
    this.o.logger.info('storage writes succeed again');
    this.publish();
  }

  /** A write failed for a reason that is not the rows' (the writer retries it). */
  failed(err: unknown): void {
    if (this.writeFailing) return;
    this.writeFailing = true;
    this.o.logger.error({ err }, 'storage refuses writes; not ready until a write commits');
    this.publish();
  }

  private async check(): Promise<void> {
    const reachable = await withTimeout(this.o.ping(), this.o.timeoutMs).then(
      () => true,
      (err: unknown) => {
        if (this.reachable) this.o.logger.error({ err }, 'storage unreachable');
        return false;
      },
    );
    if (reachable && !this.reachable) this.o.logger.info('storage reachable');
    this.reachable = reachable;
    this.publish();
    if (!this.stopped) {
      this.timer = setTimeout(() => void this.check(), this.o.intervalMs);
      this.timer.unref();
    }
  }

  private publish(): void {
    const up = this.reachable && !this.writeFailing;
    this.o.gauge.set(up ? 1 : 0);
    this.o.readiness?.setDependencyUp(up);
  }
}
