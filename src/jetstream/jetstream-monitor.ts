import type { JetStreamManager, StreamInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Clock } from '../clock';
import type { Logger } from '../log/logger';
import type { QueueMetrics } from '../metrics/queue-instruments';
import { withTimeout } from '../lifecycle/with-timeout';
import { DrainRate } from '../writer/drain-rate';
import { isStreamNotFound, type QueueTopology } from './topology';

export interface JetStreamMonitorOptions {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly topology: QueueTopology;
  /** Also read both consumers' lag (the worker does; collectors only need the stream). */
  readonly watchConsumers: boolean;
  /**
   * Called when the stream is missing (a NATS server back with an empty store, or someone
   * deleted it): creates stream and consumers again from config.
   */
  readonly recreate: () => Promise<void>;
  /** Told every change of reachability (`Readiness.setDependencyUp`). */
  readonly onChange: (up: boolean) => void;
  /** Interval between checks while JetStream answers (milliseconds); at most `DOWN_RECHECK_MS` while not. */
  readonly intervalMs: number;
  /** A check slower than this counts as failed (milliseconds); at most `DOWN_TIMEOUT_MS` while down. */
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly metrics: QueueMetrics;
  readonly logger: Logger;
}

/**
 * While the stream is unusable (e.g. its servers electing a new leader) checks run this often
 * (milliseconds) and give up after `DOWN_TIMEOUT_MS`: readiness returns within a fraction of a
 * second of the election, not a whole interval plus a timeout later.
 */
const DOWN_RECHECK_MS = 250;
const DOWN_TIMEOUT_MS = 1000;

/**
 * Checks JetStream in the background (one stream-info request per interval), so that intake
 * and `/readyz` answer from memory: a disconnect is seen at once from the connection's status
 * events, a server that stopped answering after one failed check. Feeds the stream gauges,
 * the consumer-lag gauges, and the stream's drain rate (messages removed per second, i.e. acked
 * by workers or expired), from which a collector derives `Retry-After` when the stream is full.
 */
export class JetStreamMonitor {
  readonly drainRate: DrainRate;
  private reachable = false;
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private last: { seq: number; messages: number } | null = null;
  private leader: string | null = null;
  private stream = { messages: 0, bytes: 0, maxBytes: 0 };

  constructor(private readonly o: JetStreamMonitorOptions) {
    this.drainRate = new DrainRate(o.clock);
  }

  /** Whether NATS answered the last check and has not disconnected since. */
  get up(): boolean {
    return this.reachable;
  }

  /** The stream's backlog at the last check that reached it. */
  get streamState(): { readonly messages: number; readonly bytes: number; readonly maxBytes: number } {
    return this.stream;
  }

  /** Runs a first check, then keeps checking. Idempotent. */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    void this.watchStatus();
    await this.runCheck();
  }

  /** Idempotent; waits for a check in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.checking;
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.o.nc.status()) {
      if (this.stopped) return;
      if (s.type === 'disconnect') this.set(false, null);
      // Back: check now rather than at the next tick, so recovery is as quick as the failure.
      else if (s.type === 'reconnect') void this.runCheck();
    }
  }

  /**
   * Checks now (coalesced with a check in flight): a publish that failed while the stream seemed
   * usable says it may not be, and readiness should know before the next interval.
   */
  checkNow(): void {
    if (!this.stopped) void this.runCheck();
  }

  private runCheck(): Promise<void> {
    this.checking ??= this.check().finally(() => {
      this.checking = null;
      if (this.stopped) return;
      if (this.timer) clearTimeout(this.timer);
      const interval = this.reachable ? this.o.intervalMs : Math.min(this.o.intervalMs, DOWN_RECHECK_MS);
      this.timer = setTimeout(() => void this.runCheck(), interval);
      this.timer.unref();
    });
    return this.checking;
  }

  private async check(): Promise<void> {
    const { jsm, topology, metrics } = this.o;
    if (this.o.nc.isClosed()) {
      this.set(false, new Error('NATS connection closed'));
      return;
    }
    try {
      const timeoutMs = this.checkTimeoutMs();
      const info = await withTimeout(jsm.streams.info(topology.stream), timeoutMs, this.noAnswer(timeoutMs));
      const { messages, bytes, last_seq: seq } = info.state;
      metrics.streamMessages.set(messages);
      metrics.streamBytes.set(bytes);
      metrics.streamMaxBytes.set(info.config.max_bytes);
      const firstStored = Date.parse(info.state.first_ts);
      const oldestMs = messages > 0 && Number.isFinite(firstStored) ? this.o.clock.now() - firstStored : 0;
      metrics.streamOldestAge.set(Math.max(0, oldestMs) / 1000);
      metrics.streamMaxAge.set(info.config.max_age / 1e9);
      this.watchReplicas(info);
      this.stream = { messages, bytes, maxBytes: info.config.max_bytes };
      if (this.last !== null) {
        // Removed since the last check = published (sequence advance) − growth of the backlog.
        const removed = seq - this.last.seq - (messages - this.last.messages);
        if (removed > 0) this.drainRate.record(removed);
      }
      this.last = { seq, messages };
      if (this.o.watchConsumers) {
        for (const lane of ['error', 'standard'] as const) {
          const c = await withTimeout(
            jsm.consumers.info(topology.stream, topology.consumers[lane]),
            timeoutMs,
            this.noAnswer(timeoutMs),
          );
          metrics.consumerPending.set({ consumer: lane }, c.num_pending);
          metrics.consumerAckPending.set({ consumer: lane }, c.num_ack_pending);
        }
      }
      this.set(true, null);
    } catch (err) {
      this.set(false, err);
      if (isStreamNotFound(err)) {
        this.o.logger.warn({ stream: topology.stream }, 'stream missing; creating it again');
        await this.o
          .recreate()
          .catch((e: unknown) => this.o.logger.error({ err: e }, 'cannot create the stream'));
      }
    }
  }

  /**
   * Replica gauges and leader moves. A stream on a single server has no cluster section: one copy,
   * current. On a cluster, the leader's copy counts as current while it leads.
   */
  private watchReplicas(info: StreamInfo): void {
    const { metrics, logger, topology } = this.o;
    metrics.streamReplicas.set(info.config.num_replicas || 1);
    const cluster = info.cluster;
    if (!cluster) {
      metrics.streamReplicasCurrent.set(1);
      return;
    }
    const followers = (cluster.replicas ?? []).filter((r) => r.current && !r.offline).length;
    metrics.streamReplicasCurrent.set((cluster.leader ? 1 : 0) + followers);
    const leader = cluster.leader ?? null;
    if (leader !== null && this.leader !== null && leader !== this.leader) {
      metrics.streamLeaderChanges.inc();
      logger.info({ stream: topology.stream, from: this.leader, to: leader }, 'stream leader moved');
    }
    if (leader !== null) this.leader = leader;
  }

  private checkTimeoutMs(): number {
    return this.reachable ? this.o.timeoutMs : Math.min(this.o.timeoutMs, DOWN_TIMEOUT_MS);
  }

  private noAnswer(timeoutMs: number): string {
    return `JetStream did not answer within ${timeoutMs} ms`;
  }

  private set(up: boolean, err: unknown): void {
    if (up === this.reachable) return;
    this.reachable = up;
    if (up) this.o.logger.info({ stream: this.o.topology.stream }, 'JetStream reachable');
    else this.o.logger.error({ err, stream: this.o.topology.stream }, 'JetStream unreachable');
    this.o.metrics.natsUp.set(up ? 1 : 0);
    this.o.onChange(up);
  }
}
