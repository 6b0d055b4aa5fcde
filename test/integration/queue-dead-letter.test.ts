import { jetstream } from '@nats-io/jetstream';
import pg from 'pg';
import { startCollectorProcess } from '../support/collector-process';
import { log, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { exactlyOnce, metricValue, startWorkerProcess, useQueueFixture } from './queue-support';

/** Poison messages: counted deliveries, then the dead-letter subject, never a crash loop. */
describe('queue mode: dead letters', () => {
  const fx = useQueueFixture('dead');

  it('an unparseable message and one the database refuses end in the dead-letter subject after N deliveries', async () => {
    const maxDeliveries = 3;
    const w = await startWorkerProcess({
      ...fx.q.env,
      SLUICE_DATABASE_URL: fx.db.url,
      SLUICE_WORKER_MAX_DELIVERIES: String(maxDeliveries),
      SLUICE_WORKER_ACK_WAIT: '2s',
    });
    fx.processes.push(w);
    const c = await startCollectorProcess({
      ...fx.q.env,
      SLUICE_MODE: 'ingest',
      SLUICE_DATABASE_URL: fx.db.url,
    });
    fx.processes.push(c);

    // The database refuses one kind of row permanently (an integrity violation, SQLSTATE 23514):
    // valid at intake, refused by every write. The worker must isolate it from its batch.
    const client = new pg.Client({ connectionString: fx.db.url });
    await client.connect();
    await client.query("ALTER TABLE events ADD CONSTRAINT sluice_t_poison CHECK (name <> 'poison.refused')");
    await client.end();

    const garbage = new TextEncoder().encode('{"not": "an event"');
    await jetstream(fx.q.nc).publish(`${fx.q.prefix}.standard`, garbage);
    // Healthy events around the poison keep flowing, in the same request and batch.
    const good = Array.from({ length: 50 }, () => metric('dead'));
    const poison = log('dead', { name: 'poison.refused' });
    const res = await postEvents(c.url, [...good.slice(0, 25), poison, ...good.slice(25)]);
    expect(res.status).toBe(202);
    expect(res.body.accepted).toBe(51);

    const deadStream = `${fx.q.stream}_DEAD`;
    await waitFor(
      'two dead letters',
      async () => (await fx.q.jsm.streams.info(deadStream)).state.messages === 2,
      20_000,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}\nworker output:\n${w.output.join('\n')}`);
    });
    const first = await fx.q.jsm.streams.getMessage(deadStream, { seq: 1 });
    const second = await fx.q.jsm.streams.getMessage(deadStream, { seq: 2 });
    const byReason = new Map([first, second].map((m) => [m?.header.get('Sluice-Dead-Reason'), m] as const));
    const unparseable = byReason.get('unparseable');
    const rejected = byReason.get('storage_rejected');
    expect(unparseable?.data).toEqual(garbage);
    expect(unparseable?.header.get('Sluice-Deliveries')).toBe(String(maxDeliveries));
    expect(unparseable?.header.get('Sluice-Original-Subject')).toBe(`${fx.q.prefix}.standard`);
    expect(rejected?.header.get('Sluice-Deliveries')).toBe(String(maxDeliveries));
    expect(rejected?.header.get('Sluice-Dead-Detail')).toMatch(/sluice_t_poison/);
    // Only the refused event is dead-lettered, not the 50 neighbours that shared its message.
    expect(JSON.parse(new TextDecoder().decode(rejected?.data)).name).toBe('poison.refused');
    expect(rejected?.header.get('Sluice-Event-Id')).toBe(poison.id);

    expect(
      await exactlyOnce(
        fx.db.url,
        good.map((e) => e.id as string),
      ),
    ).toBeNull();
    await waitFor('the work queue empty', async () => (await fx.q.streamMessages()) === 0, 10_000);
    expect(await metricValue(w.url, 'sluice_queue_dead_letters_total', { reason: 'unparseable' })).toBe(1);
    expect(await metricValue(w.url, 'sluice_queue_dead_letters_total', { reason: 'storage_rejected' })).toBe(
      1,
    );
    // Each poison message was delivered N times: N − 1 redeliveries each.
    expect(await metricValue(w.url, 'sluice_queue_redeliveries_total')).toBe(2 * (maxDeliveries - 1));
    // The loss map of the app: 51 taken by a plain sender, 50 stored, the refused one lost in the
    // queue for its reason; nothing pending once the worker's counts are written.
    const map = await waitFor('the loss map to settle', async () => {
      const m = await (await fetch(`${c.url}/v1/outcomes?app=dead`)).json();
      return m.pending.pipeline === 0 && m.generated === 51 ? m : null;
    });
    expect(map).toMatchObject({
      generated: 51,
      stored: 50,
      lost: 1,
      losses: { queue: { storage_rejected: 1 } },
    });
    // The worker never crashed: the same process is still ready.
    expect(w.child.exitCode).toBeNull();
    expect((await fetch(`${w.url}/readyz`)).status).toBe(200);
  });
});
