import type { BufferStore } from '../../../sdk/src/store';
import type { WireEvent } from '../../../sdk/src/types';
import { accepted, FakeClock, status, type FakeTransport } from './fakes';
import { harness } from './harness';

interface Row {
  app: string;
  minute: number;
  type: string;
  captured: number;
  delivered: number;
  dropped: Record<string, number>;
  rejected: Record<string, number>;
}
interface Report {
  id?: string;
  rows: Row[];
}

/** Every report the transport saw (events requests and reports alone), in order. */
function reportsSent(transport: FakeTransport): Report[] {
  return [...transport.requests, ...transport.reportRequests]
    .sort((a, b) => a.at - b.at)
    .map((r) => (JSON.parse(r.request.body as string) as { report: Report }).report);
}

/** Sums of every field over the reports counted once per id (as the collector counts them). */
function totals(reports: Report[]): {
  captured: number;
  delivered: number;
  dropped: number;
  rejected: number;
} {
  const seen = new Set<string>();
  const t = { captured: 0, delivered: 0, dropped: 0, rejected: 0 };
  for (const r of reports) {
    if (r.id === undefined || seen.has(r.id)) continue;
    seen.add(r.id);
    for (const row of r.rows) {
      t.captured += row.captured;
      t.delivered += row.delivered;
      for (const n of Object.values(row.dropped)) t.dropped += n;
      for (const n of Object.values(row.rejected)) t.rejected += n;
    }
  }
  return t;
}

class MemoryStore implements BufferStore {
  saved: readonly WireEvent[] = [];
  report: unknown = null;
  async load(): Promise<readonly WireEvent[]> {
    return this.saved;
  }
  async save(events: readonly WireEvent[]): Promise<void> {
    this.saved = JSON.parse(JSON.stringify(events));
  }
  async saveReport(state: unknown): Promise<void> {
    this.report = JSON.parse(JSON.stringify(state));
  }
  async loadReport(): Promise<unknown> {
    return this.report;
  }
}

describe('client reports (the loss map, SDK side)', () => {
  it('report an aggregated metric’s lost samples in samples, apart from the events', async () => {
    // `m` is aggregated, `plain` is not: its refused value is an event refused.
    const { client, transport } = harness({ aggregation: { metrics: ['m'] }, batchSize: 100 });
    for (let i = 0; i < 5; i++) client.metric('m', i);
    client.metric('m', Number.NaN);
    client.metric('m', Number.POSITIVE_INFINITY);
    client.metric('plain', Number.NaN, undefined);
    await client.close();
    // One summary captured and delivered; the two refused samples of `m` are no events.
    const rows = reportsSent(transport).flatMap((r) => r.rows) as Array<Row & { dropped_samples?: object }>;
    expect(totals(reportsSent(transport))).toEqual({ captured: 2, delivered: 1, dropped: 1, rejected: 0 });
    expect(rows.map((r) => r.dropped_samples).filter(Boolean)).toEqual([{ invalid: 2 }]);
  });

  it('ride on the next request; after a flush every captured event is delivered, dropped or rejected', async () => {
    const { client, transport } = harness({ batchSize: 10, sampleRate: 0.5, random: () => 0.9 });
    client.error(new Error('kept')); // errors keep the static rate only: 0.9 ≥ 0.5 samples it out too
    client.metric('m', 1);
    client.metric('bad name!', 1);
    client.log('l', 'x');
    await client.flush();
    // Everything was sampled out or invalid: the report goes alone, in a request of its own.
    expect(transport.requests).toHaveLength(0);
    expect(transport.reportRequests).toHaveLength(1);
    expect(totals(reportsSent(transport))).toEqual({ captured: 4, delivered: 0, dropped: 4, rejected: 0 });
    expect(reportsSent(transport)[0]!.rows.every((r) => r.app === 'shop' && r.minute % 60_000 === 0)).toBe(
      true,
    );
  });

  it('count the collector’s rejections by reason and what it took as delivered', async () => {
    const { client, transport } = harness({ batchSize: 10 });
    transport.answer(accepted(3, [1]));
    client.lifecycle('a.one');
    client.lifecycle('a.two');
    client.lifecycle('a.three');
    await client.flush();
    const reports = reportsSent(transport);
    expect(reports).toHaveLength(2); // on the events, then alone with what the answer said
    expect(reports[0]!.rows).toEqual([
      expect.objectContaining({ type: 'lifecycle', captured: 3, delivered: 0 }),
    ]);
    expect(reports[1]!.rows).toEqual([
      expect.objectContaining({ captured: 0, delivered: 2, rejected: { name_invalid: 1 } }),
    ]);
  });

  it('keep their id when resent, until a collector has read the body that carries them', async () => {
    const { client, transport, clock } = harness({ batchSize: 10 });
    transport.answer(status(503, '1'), status(503, '1'));
    client.log('l', 'x');
    const flushed = client.flush();
    await clock.advance(2000);
    await flushed;
    const reports = reportsSent(transport);
    const ids = reports.map((r) => r.id);
    expect(ids[0]).toBeDefined();
    expect(ids.slice(0, 3)).toEqual([ids[0], ids[0], ids[0]]); // two 503s, then taken
    expect(new Set(ids).size).toBe(2); // then the next report (delivered)
    expect(totals(reports)).toEqual({ captured: 1, delivered: 1, dropped: 0, rejected: 0 });
  });

  it('survive a restart with the persistence store, and count an exit without one', async () => {
    const store = new MemoryStore();
    const clock = new FakeClock();
    const first = harness({ persistence: store, batchSize: 10 }, clock);
    first.transport.answerAlways(() => status(503, '60'));
    first.client.log('l', 'kept');
    const closing = first.client.close({ timeoutMs: 1000 });
    await clock.advance(1000);
    await closing;
    expect(store.report).not.toBeNull();

    const second = harness({ persistence: store, batchSize: 10 }, clock);
    await second.client.flush();
    const all = [...reportsSent(first.transport), ...reportsSent(second.transport)];
    // The first run's report is sent again under its id by the second run, and counted once.
    expect(reportsSent(second.transport)[0]!.id).toBe(reportsSent(first.transport)[0]!.id);
    expect(totals(all)).toEqual({ captured: 1, delivered: 1, dropped: 0, rejected: 0 });

    const lost = harness({ batchSize: 10 }, clock);
    lost.transport.answer(status(503, '60'));
    lost.client.log('l', 'lost');
    const closed = lost.client.close({ timeoutMs: 1000 });
    await clock.advance(1000);
    await closed;
    expect(lost.client.stats().buffered.total).toBe(1);
    const last = reportsSent(lost.transport).at(-1)!;
    expect(last.rows).toEqual([expect.objectContaining({ dropped: { unsent_at_exit: 1 } })]);
  });
});
