/**
 * `sluice_storage_up` in tier 4 says what it says in tiers 1–3: whether the process can write.
 * The worker (the writer) exports it and follows its storage; the ingest collector writes nothing
 * and exports none (docs/monitoring.md, "What each process exports"). PostgreSQL goes away under
 * the worker through a proxy the test cuts, never the shared server.
 */
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { errorEvent, metric } from '../support/events';
import { acknowledgedIds, postEvents, waitFor } from '../support/http';
import { TcpProxy } from '../support/tcp-proxy';
import {
  exactlyOnce,
  metricValue,
  startWorkerProcess,
  useQueueFixture,
  type WorkerProcess,
} from './queue-support';

const f = useQueueFixture('storage_health');
let proxy: TcpProxy;
let worker: WorkerProcess;
let collector: CollectorProcess;

beforeAll(async () => {
  const target = new URL(f.db.url);
  proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  await proxy.start();
  const viaProxy = new URL(f.db.url);
  viaProxy.port = String(proxy.port);
  worker = await startWorkerProcess({
    ...f.q.env,
    SLUICE_DATABASE_URL: viaProxy.toString(),
    SLUICE_HEALTH_INTERVAL_MS: '200',
  });
  f.processes.push(worker);
  collector = await startCollectorProcess({
    ...f.q.env,
    SLUICE_DATABASE_URL: f.db.url,
    SLUICE_MODE: 'ingest',
  });
  f.processes.push(collector);
});

afterAll(async () => {
  await proxy?.close();
});

/** Whether the process's /metrics has a `name` series at all. */
async function hasSeries(url: string, name: string): Promise<boolean> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text.split('\n').some((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
}

describe('sluice_storage_up in queue mode', () => {
  it('is the worker’s: 1 while it can write, 0 while its storage is away, 1 again after; the ingest collector has none', async () => {
    expect(await hasSeries(collector.url, 'sluice_storage_up')).toBe(false);
    expect(await hasSeries(worker.url, 'sluice_storage_up')).toBe(true);
    await waitFor(
      'the worker can write',
      async () => (await metricValue(worker.url, 'sluice_storage_up')) === 1,
    );

    proxy.refuse();
    await waitFor(
      'the worker sees its storage away',
      async () => (await metricValue(worker.url, 'sluice_storage_up')) === 0,
      10_000,
    );
    // Intake goes on: the stream holds the events until the worker can write them.
    const batch = [metric('health'), errorEvent('health')];
    const answer = await postEvents(collector.url, batch);
    expect(answer.status).toBe(202);
    expect(await metricValue(worker.url, 'sluice_storage_up')).toBe(0);

    proxy.restore();
    await waitFor(
      'the worker writes again',
      async () => (await metricValue(worker.url, 'sluice_storage_up')) === 1,
      10_000,
    );
    await waitFor(
      'every acknowledged event stored once',
      async () => (await exactlyOnce(f.db.url, acknowledgedIds(batch, answer))) === null,
      15_000,
    );
  });
});
