import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Registry } from 'prom-client';
import { createLogger } from '../../src/log/logger';
import { createSqliteMetrics, type SqliteMetrics } from '../../src/metrics/sqlite-instruments';
import { createSqliteStorage, type SqliteStorage } from '../../src/storage/sqlite';
import { WalCheckpointer } from '../../src/storage/sqlite/wal-checkpointer';
import { waitFor } from '../support/http';
import { tempSqlitePath } from '../support/postgres';
import { telemetryEvent } from '../support/telemetry-events';

/**
 * SQLite's checkpoints run in a worker thread with its own connection (wal-checkpointer.ts): the
 * collector's connection never checkpoints in a commit; a log past its bound is emptied, once no
 * reader holds it; a thread that dies is started again; `close` leaves no log behind.
 */
const MiB = 1024 * 1024;
const logger = createLogger('silent');

interface Sampled {
  get(): Promise<{ values: Array<{ value: number; labels: Record<string, unknown>; metricName?: string }> }>;
}

/** The sample of `metric` named `name` (a histogram's `_count`; the metric itself by default) with `labels`. */
async function sampleOf(metric: Sampled, labels: Record<string, string> = {}, suffix = ''): Promise<number> {
  const { values } = await metric.get();
  const match = values.find(
    (v) =>
      (suffix === '' || v.metricName?.endsWith(suffix) === true) &&
      Object.entries(labels).every(([k, l]) => v.labels[k] === l),
  );
  return match?.value ?? 0;
}

const checkpoints = (m: SqliteMetrics, mode: 'passive' | 'truncate'): Promise<number> =>
  sampleOf(m.checkpointDuration as unknown as Sampled, { mode }, '_count');

describe('SQLite checkpoints in a worker thread', () => {
  const dirs: string[] = [];
  const open: Array<{ close(): Promise<void> }> = [];

  function fresh(
    label: string,
    truncateAtBytes = 64 * MiB,
  ): { storage: SqliteStorage; metrics: SqliteMetrics; file: string } {
    const file = tempSqlitePath(label);
    dirs.push(path.dirname(file));
    const metrics = createSqliteMetrics(new Registry());
    const storage = createSqliteStorage({
      path: file,
      clock: { now: () => Date.now() },
      logger,
      checkpoints: { idleMs: 20, truncateAtBytes },
      metrics,
    });
    open.push(storage);
    return { storage, metrics, file };
  }

  const write = (storage: SqliteStorage, app: string, n: number) =>
    storage.writeRows(
      Array.from({ length: n }, (_, i) => storage.toRow(telemetryEvent('metric', { app, value: i }))),
    );

  afterAll(async () => {
    for (const s of open) await s.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('checkpoints in the thread, not in the commits, and leaves no log at close', async () => {
    const { storage, metrics, file } = fresh('ckpt_thread');
    await storage.migrate();
    // Far more than SQLite's own checkpoint threshold (1,000 pages): a commit would have copied.
    for (let i = 0; i < 20; i++) await write(storage, 'ckpt', 2000);
    const probe = new Database(file);
    try {
      expect(probe.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      probe.close();
    }
    await waitFor('a passive checkpoint', async () => (await checkpoints(metrics, 'passive')) > 0, 10_000);
    await storage.close();
    expect(fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0).toBe(0);
  });

  it('empties a log past its bound once no reader holds it, and counts the tries a reader kept busy', async () => {
    const { storage, metrics, file } = fresh('ckpt_bound', MiB);
    await storage.migrate();
    // A reader holding its snapshot: no checkpoint can copy past it, so the log grows.
    const reader = new Database(file, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM metric_samples').get();
    for (let i = 0; i < 10; i++) await write(storage, 'bound', 2000);
    expect(fs.statSync(`${file}-wal`).size).toBeGreaterThan(MiB);
    await waitFor(
      'a truncate kept busy by the reader',
      async () => (await sampleOf(metrics.checkpointsBusy as unknown as Sampled, { mode: 'truncate' })) > 0,
      10_000,
    );

    reader.exec('COMMIT');
    reader.close();
    await waitFor(
      'the log emptied',
      async () => (await sampleOf(metrics.walBytes as unknown as Sampled)) === 0,
      10_000,
    );
    expect(fs.statSync(`${file}-wal`).size).toBe(0);
    expect(await checkpoints(metrics, 'truncate')).toBeGreaterThan(0);
    // The writer goes on after it.
    await write(storage, 'bound', 10);
  });

  it('starts another thread when its thread dies, counted', async () => {
    const file = tempSqlitePath('ckpt_restart');
    dirs.push(path.dirname(file));
    const storage = createSqliteStorage({ path: file, clock: { now: () => Date.now() }, logger });
    open.push(storage);
    await storage.migrate();
    const metrics = createSqliteMetrics(new Registry());
    const checkpointer = new WalCheckpointer({ file, logger, metrics }, { idleMs: 20, restartDelayMs: 50 });
    open.push({ close: () => checkpointer.stop() });
    checkpointer.start();
    await waitFor('a checkpoint', async () => (await checkpoints(metrics, 'passive')) > 0, 10_000);

    await (checkpointer as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await waitFor(
      'a restart',
      async () => (await sampleOf(metrics.checkpointThreadRestarts as unknown as Sampled)) === 1,
      10_000,
    );
    const before = await checkpoints(metrics, 'passive');
    await waitFor('checkpoints again', async () => (await checkpoints(metrics, 'passive')) > before, 10_000);
    await checkpointer.stop();
  });
});
