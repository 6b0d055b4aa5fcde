import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { createLogger } from '../../../src/log/logger';
import { createOutcomeMetrics } from '../../../src/metrics/outcome-instruments';
import type { OutcomeBatch, OutcomeCount } from '../../../src/loss-map/outcome';
import { OutcomeRecorder } from '../../../src/loss-map/outcome-recorder';

const count = (n: number, app = 'a'): OutcomeCount => ({
  app,
  minute: 0,
  type: 'log',
  outcome: 'accepted',
  reason: '',
  origin: 'direct',
  count: n,
});

function recorder(write: (b: OutcomeBatch) => Promise<void>, maxKeys?: number, maxCountsPerWrite?: number) {
  return new OutcomeRecorder({
    write,
    flushIntervalMs: 60_000,
    ...(maxKeys === undefined ? {} : { maxKeys }),
    ...(maxCountsPerWrite === undefined ? {} : { maxCountsPerWrite }),
    clock: { now: () => 0 },
    metrics: createOutcomeMetrics(new Registry()),
    logger: createLogger('silent'),
  });
}

describe('OutcomeRecorder', () => {
  it('sums counts of one key, keeps everything through a failed write, and writes a report once per id', async () => {
    const written: OutcomeBatch[] = [];
    let fail = true;
    const r = recorder(async (b) => {
      if (fail) throw new Error('storage away');
      written.push(b);
    });
    r.count(count(2));
    r.count(count(3));
    const report = { id: 'r1', counts: [count(1)] };
    r.report(report);
    r.report(report);
    expect(await r.flush()).toBe(false);
    fail = false;
    r.count(count(1));
    expect(await r.flush()).toBe(true);
    expect(written).toHaveLength(1);
    expect(written[0]?.counts).toEqual([count(6)]);
    expect(written[0]?.reports.map((x) => x.id)).toEqual(['r1']);
    expect(await r.flush()).toBe(true);
    expect(written).toHaveLength(1); // nothing left to write
    await r.stop();
  });

  it('writes many keys in parts, the reports with the first; a failed part keeps itself and the parts after it, not those written', async () => {
    const written: OutcomeBatch[] = [];
    let failAt = 2;
    const r = recorder(
      async (b) => {
        if (written.length === failAt) throw new Error('storage away');
        written.push(b);
      },
      undefined,
      2,
    );
    for (const app of ['a', 'b', 'c', 'd', 'e']) r.count(count(1, app));
    r.report({ id: 'r1', counts: [count(1, 'z')] });
    expect(await r.flush()).toBe(false);
    expect(written.map((b) => b.counts.map((c) => c.app))).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    expect(written[0]?.reports.map((x) => x.id)).toEqual(['r1']);
    expect(written[1]?.reports).toEqual([]);
    failAt = -1;
    expect(await r.flush()).toBe(true);
    expect(written.map((b) => b.counts.map((c) => c.app))).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    await r.stop();
  });

  it('holds at most maxKeys keys: past them a count is discarded (and counted), not kept', async () => {
    const written: OutcomeBatch[] = [];
    const r = recorder(async (b) => void written.push(b), 2);
    r.count(count(1, 'a'));
    r.count(count(1, 'b'));
    r.count(count(1, 'c'));
    r.count(count(1, 'a'));
    await r.stop();
    expect(written[0]?.counts.map((c) => [c.app, c.count])).toEqual([
      ['a', 2],
      ['b', 1],
    ]);
  });

  it('logs what it could not write at stop, each dropped event with its key: the only record left when storage is away', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    const r = new OutcomeRecorder({
      write: async () => {
        throw new Error('storage away');
      },
      flushIntervalMs: 60_000,
      stopDeadlineMs: 50,
      clock: { now: () => Date.now() },
      metrics: createOutcomeMetrics(new Registry()),
      logger: createLogger('error', sink),
    });
    r.count(count(5));
    r.count({
      ...count(7),
      minute: 60_000,
      type: 'metric',
      outcome: 'dropped',
      reason: 'shutdown_timeout',
      origin: '',
    });
    await r.stop();
    const line = lines.find((l) => l.msg === 'loss-map counts not written at stop');
    expect(line).toMatchObject({
      events: { accepted: 5, dropped: 7 },
      dropped: [{ app: 'a', minute: 60_000, type: 'metric', reason: 'shutdown_timeout', count: 7 }],
    });
  });
});

describe('OutcomeRecorder while storage keeps failing', () => {
  it('logs a failure once, again only when its reason changes, and once when writes resume', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    let failure: Error | null = Object.assign(new Error('database "x" does not exist'), { code: '3D000' });
    const r = new OutcomeRecorder({
      write: async () => {
        if (failure !== null) throw failure;
      },
      flushIntervalMs: 60_000,
      clock: { now: () => 0 },
      metrics: createOutcomeMetrics(new Registry()),
      logger: createLogger('info', sink),
    });
    for (let i = 0; i < 5; i++) {
      r.count(count(1));
      expect(await r.flush()).toBe(false);
    }
    failure = new Error('connect ECONNREFUSED 127.0.0.1:5432');
    for (let i = 0; i < 3; i++) expect(await r.flush()).toBe(false);
    failure = null;
    expect(await r.flush()).toBe(true);
    r.count(count(1));
    expect(await r.flush()).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.map((l) => [l.msg, l.error ?? null])).toEqual([
      ['loss-map write failed; kept', 'database "x" does not exist'],
      ['loss-map write failed; kept', 'connect ECONNREFUSED 127.0.0.1:5432'],
      ['loss-map writes resumed', null],
    ]);
    // One line each: the reason and its code, no stack.
    expect(lines[0]).toMatchObject({ code: '3D000', failedWrites: 1 });
    expect(JSON.stringify(lines)).not.toContain('    at ');
    expect(lines[2]).toMatchObject({ failedWrites: 8 });
  });
});
