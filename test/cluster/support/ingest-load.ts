import { Agent, request } from 'node:http';
import { errorEvent, lifecycle, log, metric, type WireEvent } from '../../support/events';

export interface IngestLoadOptions {
  /** Usually HAProxy's URL. */
  readonly url: string;
  /** Closed-loop workers, each one request at a time on a keep-alive connection of its own. */
  readonly workers: number;
  /** Events per request (a mix of types; about 300 bytes each). */
  readonly batchSize: number;
  /** Pause between a worker's requests (milliseconds): leaves CPU for health checks on a busy box. */
  readonly pauseMs: number;
  /**
   * A client that retries: a batch not answered 202 is sent again, same body (same ids and ts),
   * up to this many attempts. 1: no retry, every failure counts.
   */
  readonly maxAttempts: number;
  /** Wait before a retry (milliseconds). */
  readonly retryDelayMs?: number;
  /** Bounds of the run: it stops by itself after this many requests or this long. */
  readonly maxRequests: number;
  readonly maxMs: number;
  /** `source.app` of every event. */
  readonly app: string;
}

/** One answer that was not a 202 (or no answer at all). */
export interface FailedAttempt {
  readonly at: number;
  readonly status: number | 'transport';
  readonly detail: string;
  readonly servedBy: string | null;
}

export interface IngestLoadReport {
  readonly requests: number;
  readonly byStatus: Readonly<Record<string, number>>;
  /** Every attempt answered otherwise than 202, retried or not. */
  readonly failedAttempts: readonly FailedAttempt[];
  /** Batches given up on (attempts exhausted): never acknowledged. */
  readonly abandonedBatches: number;
  /** Ids of every event answered 202. */
  readonly ackedIds: readonly string[];
  /** 202 answers by the `X-Served-By` header HAProxy adds. */
  readonly servedBy: Readonly<Record<string, number>>;
}

function batchOf(app: string, size: number): WireEvent[] {
  const makers = [metric, metric, metric, log, lifecycle, errorEvent];
  return Array.from({ length: size }, (_, i) => (makers[i % makers.length] ?? metric)(app));
}

function post(agent: Agent, url: URL, body: Buffer) {
  return new Promise<{ status: number; text: string; servedBy: string | null }>((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: '/v1/events',
        method: 'POST',
        agent,
        timeout: 20_000,
        headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const servedBy = res.headers['x-served-by'];
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString('utf8'),
            servedBy: typeof servedBy === 'string' ? servedBy : null,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Closed-loop ingest through the cluster, as SDKs would send it, recording every answer. Bounded
 * in requests and time; `stop` ends it early and waits for requests in flight.
 */
export class IngestLoad {
  private readonly agent: Agent;
  private readonly target: URL;
  private stopped = false;
  private requests = 0;
  private readonly byStatus: Record<string, number> = {};
  private readonly failedAttempts: FailedAttempt[] = [];
  private abandonedBatches = 0;
  private readonly ackedIds: string[] = [];
  private readonly servedBy: Record<string, number> = {};
  private readonly done: Promise<void>;

  constructor(private readonly o: IngestLoadOptions) {
    this.target = new URL(o.url);
    this.agent = new Agent({ keepAlive: true, maxSockets: o.workers });
    const deadline = Date.now() + o.maxMs;
    const worker = async (): Promise<void> => {
      while (!this.stopped && this.requests < o.maxRequests && Date.now() < deadline) {
        await this.sendBatch();
        if (o.pauseMs > 0) await new Promise((r) => setTimeout(r, o.pauseMs));
      }
    };
    this.done = Promise.all(Array.from({ length: o.workers }, worker)).then(() => undefined);
  }

  private async sendBatch(): Promise<void> {
    const events = batchOf(this.o.app, this.o.batchSize);
    const body = Buffer.from(JSON.stringify({ events }));
    for (let attempt = 1; ; attempt++) {
      this.requests++;
      let failure: FailedAttempt;
      try {
        const res = await post(this.agent, this.target, body);
        this.byStatus[res.status] = (this.byStatus[res.status] ?? 0) + 1;
        const accepted = res.status === 202 ? (JSON.parse(res.text) as { accepted?: number }).accepted : null;
        if (res.status === 202 && accepted === events.length) {
          for (const e of events) this.ackedIds.push(e.id as string);
          if (res.servedBy !== null) this.servedBy[res.servedBy] = (this.servedBy[res.servedBy] ?? 0) + 1;
          return;
        }
        failure = {
          at: Date.now(),
          status: res.status,
          detail: res.text.slice(0, 200),
          servedBy: res.servedBy,
        };
      } catch (err) {
        this.byStatus.transport = (this.byStatus.transport ?? 0) + 1;
        failure = { at: Date.now(), status: 'transport', detail: (err as Error).message, servedBy: null };
      }
      this.failedAttempts.push(failure);
      // Retries go on past `stop` and the deadline, bounded by maxAttempts: an SDK keeps its batch.
      if (attempt >= this.o.maxAttempts) {
        this.abandonedBatches++;
        return;
      }
      await new Promise((r) => setTimeout(r, this.o.retryDelayMs ?? 100));
    }
  }

  /** 202 answers so far. */
  get acknowledged(): number {
    return this.byStatus['202'] ?? 0;
  }

  /** Resolves once `n` more 202 answers have arrived than when called (bounded by `timeoutMs`). */
  async waitForMoreAcks(n: number, timeoutMs = 15_000): Promise<void> {
    const target = this.acknowledged + n;
    const deadline = Date.now() + timeoutMs;
    while (this.acknowledged < target) {
      if (Date.now() > deadline)
        throw new Error(`load: fewer than ${n} answers 202 within ${timeoutMs} ms (${this.summary()})`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Ends the load (requests in flight and their retries finish) and reports. */
  async stop(): Promise<IngestLoadReport> {
    this.stopped = true;
    await this.done;
    this.agent.destroy();
    return {
      requests: this.requests,
      byStatus: { ...this.byStatus },
      failedAttempts: [...this.failedAttempts],
      abandonedBatches: this.abandonedBatches,
      ackedIds: [...this.ackedIds],
      servedBy: { ...this.servedBy },
    };
  }

  summary(): string {
    return `requests ${this.requests}, by status ${JSON.stringify(this.byStatus)}`;
  }
}

/** A report line for assertion messages. */
export function describeReport(r: IngestLoadReport): string {
  return (
    `requests ${r.requests}, by status ${JSON.stringify(r.byStatus)}, served by ${JSON.stringify(r.servedBy)}, ` +
    `abandoned ${r.abandonedBatches}; first failures: ${JSON.stringify(r.failedAttempts.slice(0, 5))}`
  );
}
