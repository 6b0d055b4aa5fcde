import type { Logger } from '../log/logger';

/** Runs `task` every `intervalMs` (milliseconds), never two at once; failures are logged, not thrown. */
export class PeriodicTask {
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly task: () => Promise<void>,
    private readonly logger: Logger,
  ) {}

  /** Idempotent. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.inFlight) return;
      this.inFlight = this.task()
        .catch((err: unknown) => this.logger.warn({ err, task: this.name }, 'periodic task failed'))
        .finally(() => {
          this.inFlight = null;
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Idempotent; waits for a run in flight. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.inFlight;
  }
}
