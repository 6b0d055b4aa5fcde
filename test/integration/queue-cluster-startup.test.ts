import type { JetStreamManager } from '@nats-io/jetstream';
import { randomBytes } from 'node:crypto';
import { UNAVAILABLE_RETRY_AFTER_S } from '../../src/intake/retry-after';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { sharedNatsUrl, startWorkerProcess, useClusterFixture, type WorkerProcess } from './queue-support';

/**
 * How tier-4 processes start against a JetStream cluster they do not control: an operator's
 * stream, a node that is down, a replica count the servers cannot give. A process listens at once
 * (`/livez` 200, `/readyz` 503 until the stream is usable) and says what it found.
 */
describe('queue mode start-up on a JetStream cluster', () => {
  const f = useClusterFixture('queue_cluster_start');
  const { processes } = f;
  const names = (label: string) => f.stream(label);

  /** Starts a process without waiting for /readyz, and waits for its /livez instead. */
  async function live(p: CollectorProcess | WorkerProcess, within: number): Promise<number> {
    processes.push(p);
    const started = Date.now();
    await waitFor(`${p.url}/livez`, async () => (await getJson(`${p.url}/livez`)).status === 200, within);
    return Date.now() - started;
  }

  it('an existing stream keeps the replicas its operator gave it, and the difference is reported', async () => {
    const { stream, prefix, env } = names('operator');
    // The operator made it R3; Sluice's setting is left at its default (1).
    await f.jsm.streams.add({
      name: stream,
      subjects: [`${prefix}.error`, `${prefix}.standard`],
      retention: 'workqueue',
      num_replicas: 3,
    } as Parameters<JetStreamManager['streams']['add']>[0]);

    const c = await startCollectorProcess({ ...env, SLUICE_MODE: 'ingest' });
    processes.push(c);
    const w = await startWorkerProcess(env);
    processes.push(w);
    expect((await f.jsm.streams.info(stream)).config.num_replicas).toBe(3);
    for (const output of [c.output, w.output]) {
      const report = output.find((l) => l.includes('"changed":false'));
      expect(report).toBeDefined();
      expect(JSON.parse(report!)).toMatchObject({
        stream,
        level: 'warn',
        replicas: { stream: 3, setting: 1, changed: false },
      });
    }
    // The consumers follow the stream's replicas.
    const consumer = await f.jsm.consumers.info(stream, `${stream}_standard`);
    expect(consumer.cluster?.replicas?.length).toBe(2);
    expect((await postEvents(c.url, [metric('operator')])).status).toBe(202);
  });

  it('with the stream’s only node down, a new collector and worker listen at once, not ready until it is back', async () => {
    const { stream, env } = names('down');
    const first = await startCollectorProcess({ ...env, SLUICE_MODE: 'ingest' });
    processes.push(first);
    const node = await f.cluster.leaderOf(stream);
    await node.kill();
    try {
      const c = await startCollectorProcess(
        { ...env, SLUICE_MODE: 'ingest', SLUICE_HEALTH_INTERVAL_MS: '200' },
        { waitReady: false },
      );
      const w = await startWorkerProcess({ ...env, SLUICE_HEALTH_INTERVAL_MS: '200' }, { waitReady: false });
      expect(await live(c, 10_000)).toBeLessThan(10_000);
      await live(w, 10_000);
      expect((await getJson(`${c.url}/readyz`)).status).toBe(503);
      expect((await getJson(`${w.url}/readyz`)).status).toBe(503);
      const refused = await postEvents(c.url, [metric('down')]);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe(String(UNAVAILABLE_RETRY_AFTER_S));

      await node.start();
      await waitFor('collector ready', async () => (await getJson(`${c.url}/readyz`)).status === 200, 30_000);
      await waitFor('worker ready', async () => (await getJson(`${w.url}/readyz`)).status === 200, 30_000);
      expect((await postEvents(c.url, [metric('down')])).status).toBe(202);
      expect(c.child.exitCode).toBeNull();
    } finally {
      await node.start();
    }
  }, 90_000);

  it('SLUICE_NATS_REPLICAS=5 on three servers: listening, not ready, and the log says why', async () => {
    const { env } = names('five');
    const c = await startCollectorProcess(
      { ...env, SLUICE_MODE: 'ingest', SLUICE_NATS_REPLICAS: '5' },
      { waitReady: false },
    );
    await live(c, 10_000);
    await waitFor(
      'the reason in the log',
      () => c.output.find((l) => l.includes('SLUICE_NATS_REPLICAS=5')),
      15_000,
    );
    expect((await getJson(`${c.url}/readyz`)).status).toBe(503);
    expect(c.child.exitCode).toBeNull();
  });

  it('SLUICE_NATS_REPLICAS=3 on a server that is not clustered: exits at start, naming the setting', async () => {
    const c = await startCollectorProcess(
      {
        SLUICE_MODE: 'ingest',
        SLUICE_DATABASE_URL: f.db.url,
        SLUICE_NATS_URL: sharedNatsUrl(),
        SLUICE_NATS_STREAM: `SLUICE_T_SINGLE_${randomBytes(4).toString('hex')}`,
        SLUICE_NATS_REPLICAS: '3',
      },
      { waitReady: false },
    );
    processes.push(c);
    expect(await c.exited).toBe(2);
    expect(c.output.join('\n')).toMatch(/SLUICE_NATS_REPLICAS.*not clustered/);
  });
});
