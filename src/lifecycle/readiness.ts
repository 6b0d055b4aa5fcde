import type { Logger } from '../log/logger';
import type { Metrics } from '../metrics/instruments';
import { withTimeout } from './with-timeout';

/** Readiness for traffic: storage reachable (checked in the background) and not draining. */
export class Readiness {
  private storageReachable = false;
  private isDraining = false;

  constructor(private readonly metrics: Metrics) {
    metrics.storageUp.set(0);
    metrics.draining.set(0);
  }

  get storageUp(): boolean {
    return this.storageReachable;
  }

  get draining(): boolean {
    return this.isDraining;
  }

  /** Why the collector is not ready, or null when it is. */
  notReadyReason(): 'draining' | 'storage_unavailable' | null {
    if (this.isDraining) return 'draining';
    if (!this.storageReachable) return 'storage_unavailable';
    return null;
  }

  setStorageUp(up: boolean): void {
    this.storageReachable = up;
    this.metrics.storageUp.set(up ? 1 : 0);
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
        if (this.o.readiness.storageUp) this.o.logger.error({ err }, 'storage unreachable');
        return false;
      },
    );
    if (up && !this.o.readiness.storageUp) this.o.logger.info('storage reachable');
    this.o.readiness.setStorageUp(up);
    if (!this.stopped) {
      this.timer = setTimeout(() => void this.check(), this.o.intervalMs);
      this.timer.unref();
    }
  }
}
