import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import { withTimeout } from './with-timeout';

/**
 * What a process must reach to take traffic: storage (a collector writing directly, tiers 1–3)
 * or the JetStream stream (an ingest collector or a worker, tier 4).
 */
export type ReadinessDependency = 'storage' | 'jetstream';

/**
 * Readiness for traffic: its dependency reachable (checked in the background, see
 * `StorageHealthMonitor` and `JetStreamMonitor`) and not draining. `sluice_storage_up` follows
 * storage only; JetStream's state is `sluice_queue_nats_up`.
 */
export class Readiness {
  private dependencyReachable = false;
  private isDraining = false;

  constructor(
    private readonly metrics: Metrics,
    /** What `dependencyUp` is about. Default storage. */
    readonly dependency: ReadinessDependency = 'storage',
  ) {
    if (dependency === 'storage') metrics.storageUp.set(0);
    metrics.draining.set(0);
  }

  /** Whether the last background check reached the dependency. */
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
    if (this.dependency === 'storage') this.metrics.storageUp.set(up ? 1 : 0);
  }

  startDraining(): void {
    this.isDraining = true;
    this.metrics.draining.set(1);
  }
}

export interface StorageHealthOptions {
  readonly ping: () => Promise<void>;
  readonly readiness: Readiness;
  /** Interval between checks (milliseconds). */
  readonly intervalMs: number;
  /** A check slower than this counts as failed (milliseconds). */
  readonly timeoutMs: number;
  readonly logger: Logger;
}

/**
 * Pings storage in the background so `/readyz` answers from memory, never
 * with a database round trip per call. Logs each transition once.
 */
export class StorageHealthMonitor {
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;

  constructor(private readonly o: StorageHealthOptions) {}

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

  private async check(): Promise<void> {
    const up = await withTimeout(this.o.ping(), this.o.timeoutMs).then(
      () => true,
      (err: unknown) => {
        if (this.o.readiness.dependencyUp) this.o.logger.error({ err }, 'storage unreachable');
        return false;
      },
    );
    if (up && !this.o.readiness.dependencyUp) this.o.logger.info('storage reachable');
    this.o.readiness.setDependencyUp(up);
    if (!this.stopped) {
      this.timer = setTimeout(() => void this.check(), this.o.intervalMs);
      this.timer.unref();
    }
  }
}
