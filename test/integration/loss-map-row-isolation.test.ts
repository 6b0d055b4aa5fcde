import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { startOutcomeRecorder } from '../../src/compose/outcomes';
import { loadConfig } from '../../src/config/load';
import { createLogger } from '../../src/log/logger';
import type { OutcomeCount } from '../../src/loss-map/outcome';
import { createSqliteStorage } from '../../src/storage/sqlite';
import type { Storage } from '../../src/storage/port';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';
import { openPostgresStorage } from '../support/storage';

/**
 * The loss map's writer, as the collector wires it, on real storage: a batch holding rows storage
 * refuses (values that no client can bring any more, written straight to the recorder) writes
 * every other row at once, drops only the refused ones, counts them, and logs them once.
 */

const MINUTE = Date.now() - (Date.now() % 60_000);
const count = (app: string, n: number, over: Partial<OutcomeCount> = {}): OutcomeCount => ({
  app,
  minute: MINUTE,
  type: 'log',
  outcome: 'accepted',
  reason: '',
  origin: 'direct',
  count: n,
  ...over,
});

/** Rows each storage refuses: a minute no integer column holds (both), text PostgreSQL cannot store. */
const REFUSED: Record<'sqlite' | 'postgres', OutcomeCount[]> = {
  sqlite: [count('good-app', 2, { minute: 1e300 }), count('good-app', 3, { minute: MINUTE + 0.5 })],
  postgres: [
    count('good-app', 2, { minute: 1e300 }),
    count('x\u0000', 3),
    count(randomBytes(4050).toString('base64'), 4),
    count('good-app', 5, { reason: 'x\u0000', outcome: 'rejected' }),
  ],
};

describe.each(['sqlite', 'postgres'] as const)('loss-map writes isolate a refused row (%s)', (kind) => {
  let db: TestDatabase | null = null;
  let storage: Storage;

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase('loss_map_isolation') : null;
    const logger = createLogger('silent');
    storage = db
      ? openPostgresStorage(db.url)
      : createSqliteStorage({
          path: tempSqlitePath('loss_map_isolation'),
          clock: { now: () => Date.now() },
          logger,
        });
    await storage.migrate();
  });

  afterAll(async () => {
    await storage?.close();
    await db?.drop();
  });

  it('writes the other rows and reports, drops the refused ones, counts them and logs one line', async () => {
    const lines: Array<{ msg: string; counts?: number; events?: number }> = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
        done();
      },
    });
    const registry = new Registry();
    const config = loadConfig({ SLUICE_OUTCOMES_FLUSH_MS: '60000' });
    const recorder = startOutcomeRecorder(
      config,
      storage,
      registry,
      { now: () => Date.now() },
      createLogger('info', sink),
    );
    if (recorder === null) throw new Error('the loss map is on by default');

    const bad = REFUSED[kind];
    for (const c of bad) recorder.count(c);
    for (let i = 0; i < 20; i++) recorder.count(count('good-app', 1, { type: i % 2 ? 'log' : 'metric' }));
    recorder.count(count('other-app', 7));
    const badReport = {
      id: randomUUID(),
      counts: [count('good-app', 9, { minute: 1e300, outcome: 'captured', origin: 'sdk' })],
    };
    const goodReport = {
      id: randomUUID(),
      counts: [count('good-app', 11, { outcome: 'captured', origin: 'sdk' })],
    };
    recorder.report(badReport);
    recorder.report(goodReport);

    expect(await recorder.flush()).toBe(true);
    const good = await storage.queryOutcomes({ app: 'good-app', from: MINUTE, to: MINUTE + 60_000 });
    expect(good.map(({ type, outcome, count: n }) => ({ type, outcome, n }))).toEqual([
      { type: 'log', outcome: 'accepted', n: 10 },
      { type: 'log', outcome: 'captured', n: 11 },
      { type: 'metric', outcome: 'accepted', n: 10 },
    ]);
    expect(await storage.queryOutcomes({ app: 'other-app', from: MINUTE, to: MINUTE + 60_000 })).toEqual([
      expect.objectContaining({ outcome: 'accepted', count: 7 }),
    ]);

    const metrics = await registry.getSingleMetricAsString('sluice_outcomes_refused_total');
    const events = bad.reduce((n, c) => n + c.count, 0);
    expect(metrics).toContain(`sluice_outcomes_refused_total{kind="events"} ${events}`);
    expect(metrics).toContain('sluice_outcomes_refused_total{kind="reports"} 1');
    expect(await registry.getSingleMetricAsString('sluice_outcome_batches_total')).not.toContain(
      'result="failed"',
    );
    await new Promise((r) => setImmediate(r));
    const refusedLines = () => lines.filter((l) => l.msg.startsWith('storage refused loss-map counts'));
    expect(refusedLines()).toHaveLength(1);
    expect(refusedLines()[0]).toMatchObject({ counts: bad.length, events });

    // Dropped, not kept: the next write has nothing of them, and logs nothing more.
    recorder.count(count('good-app', 1));
    expect(await recorder.flush()).toBe(true);
    await recorder.stop();
    await new Promise((r) => setImmediate(r));
    expect(refusedLines()).toHaveLength(1);
  });
});
