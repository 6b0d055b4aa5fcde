import pg from 'pg';
import { BENCH_POLLER } from './pg-bench-db';
import { sampleProcess } from './proc-stats';

/** How often the backends of the database are listed (milliseconds). */
const POLL_MS = 100;

/**
 * CPU time PostgreSQL's backends spend serving one database over a window, read from /proc (the
 * server runs on this box). The backends are listed every 100 ms, so a connection opened and
 * closed inside the window counts up to its last listing; a backend first seen after the start
 * counts from zero (it began in the window). PostgreSQL's shared processes (WAL writer,
 * checkpointer, background writer, autovacuum) are not counted, nor this class's own connection, nor
 * the bench's row counter (`BENCH_POLLER`), whose `count(*)` scans are the bench's, not the server's.
 */
export class PgBackendCpu {
  private readonly client: pg.Client;
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private readonly application = new Map<number, string>();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> = Promise.resolve();
  private starting = true;

  constructor(databaseUrl: string) {
    this.client = new pg.Client({ connectionString: databaseUrl });
    this.client.on('error', () => undefined);
  }

  async start(): Promise<void> {
    await this.client.connect();
    await this.poll();
    this.starting = false;
    this.timer = setInterval(() => {
      this.polling = this.polling.then(() => this.poll()).catch(() => undefined);
    }, POLL_MS);
  }

  /** Ends the window: CPU seconds of the database's backends in it (NaN when /proc cannot be read). */
  async stop(): Promise<number> {
    if (this.timer) clearInterval(this.timer);
    await this.polling;
    await this.poll();
    await this.client.end().catch(() => undefined);
    let total = 0;
    for (const [pid, end] of this.last) total += end - (this.first.get(pid) ?? 0);
    return this.last.size > 0 ? total : NaN;
  }

  /**
   * After `stop`: the same CPU seconds by the backends' `application_name` up to its first `:`
   * (`sluice` for the collector's pools, `sluice-scheduler` for its maintenance runs), so that
   * what the writes cost is told apart from what the collector's scheduled work costs.
   */
  byApplication(): Map<string, number> {
    return this.byName((application) => application.split(':')[0] as string);
  }

  /**
   * After `stop`: the same CPU seconds by whole `application_name` (`sluice:read` for the
   * collector's read pool, `sluice:writer` for its writer…), so that reads are told apart from writes.
   */
  byPool(): Map<string, number> {
    return this.byName((application) => application);
  }

  private byName(nameOf: (application: string) => string): Map<string, number> {
    const out = new Map<string, number>();
    for (const [pid, end] of this.last) {
      const name = nameOf(this.application.get(pid) ?? '');
      out.set(name, (out.get(name) ?? 0) + end - (this.first.get(pid) ?? 0));
    }
    return out;
  }

  private async poll(): Promise<void> {
    const { rows } = await this.client.query<{ pid: number; application_name: string }>(
      `SELECT pid, application_name FROM pg_stat_activity
        WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
          AND application_name IS DISTINCT FROM $1`,
      [BENCH_POLLER],
    );
    for (const { pid, application_name } of rows) {
      this.application.set(pid, application_name);
      let cpu: number;
      try {
        cpu = sampleProcess(pid).cpuSeconds;
      } catch {
        continue; // gone since it was listed
      }
      if (!this.first.has(pid)) this.first.set(pid, this.starting ? cpu : 0);
      this.last.set(pid, cpu);
    }
  }
}
