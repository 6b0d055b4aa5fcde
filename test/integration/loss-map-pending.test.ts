/**
 * `pending` in the loss map is only what can still arrive (docs/http-api.md, "GET /v1/outcomes"):
 * a body a plain HTTP sender sends again, and events refused because they name another app than
 * their key's, are counted where they end, so that pending reaches 0 and
 * generated = stored + lost exactly. Real collector processes on SQLite and PostgreSQL, defaults
 * but for the rate limit (the test sends a few dozen events at once). Build first: `npm run build`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createClient } from '../../sdk/src';
import { generateKey } from '../../src/auth/api-keys';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { errorEvent, log, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { lossMap, rowsOfApp, settledLossMap, totalLosses, type StorageAt } from '../support/loss-map';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

jest.setTimeout(60_000);

describe.each(['sqlite', 'postgres'] as const)('loss map: nothing stays pending (%s)', (kind) => {
  let db: TestDatabase | null = null;
  let at: StorageAt;
  const running: CollectorProcess[] = [];
  const storageEnv = (): Record<string, string> =>
    at.kind === 'postgres' ? { SLUICE_DATABASE_URL: at.url } : { SLUICE_SQLITE_PATH: at.path };

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase('loss_map_pending') : null;
    at = db
      ? { kind: 'postgres', url: db.url }
      : { kind: 'sqlite', path: tempSqlitePath('loss_map_pending') };
  });

  afterAll(async () => {
    for (const c of running) await c.stop();
    await db?.drop();
  });

  it('a body sent again by plain HTTP: the copies storage skips are counted as duplicates, and nothing stays pending', async () => {
    const app = `resent-${kind}-${process.pid}`;
    const c = await startCollectorProcess(storageEnv());
    running.push(c);
    const body = [
      ...Array.from({ length: 6 }, () => metric(app)),
      ...Array.from({ length: 4 }, () => log(app)),
      ...Array.from({ length: 2 }, () => errorEvent(app)),
    ];
    expect((await postEvents(c.url, body)).status).toBe(202);
    await settledLossMap(c.url, app, at);
    // The sender did not see the answer and sends the same body again: same ids, same ts.
    expect((await postEvents(c.url, body)).body.accepted).toBe(12);
    // PostgreSQL counts the resent metric samples stored until the merge job removes their copies
    // and moves the counts to duplicate: the stored count then matches the rows read.
    const m = await waitFor(
      'the resent copies counted',
      async () => {
        const m = await lossMap(c.url, app);
        const corrected = m.stored === (await rowsOfApp(at, app));
        return m.generated === 24 && m.pending.pipeline === 0 && corrected ? m : null;
      },
      15_000,
    ).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}: ${JSON.stringify(await lossMap(c.url, app))}`);
    });
    expect(m).toMatchObject({ generated: 24, stored: 12, lost: 12, pending: { sdk: 0, pipeline: 0 } });
    expect(m.losses.storage).toEqual({ duplicate: 12 });
    expect(m.generated).toBe(m.stored + totalLosses(m) + m.pending.sdk + m.pending.pipeline);
    expect(await rowsOfApp(at, app)).toBe(12);
  });

  it('a collector killed with -9 after storing events whose acceptance it had not written: past the horizon they count as generated_unrecorded, pending 0', async () => {
    const app = `killed-${kind}-${process.pid}`;
    // The acceptance is written once a minute, so the kill always comes before it.
    const first = await startCollectorProcess({ ...storageEnv(), SLUICE_OUTCOMES_FLUSH_MS: '60000' });
    running.push(first);
    const ts = Date.now() - 5 * 60_000;
    const events = [metric(app, { ts }), log(app, { ts }), errorEvent(app, { ts })];
    expect((await postEvents(first.url, events)).body.accepted).toBe(3);
    await waitFor('the rows stored', async () => (await rowsOfApp(at, app)) === 3);
    first.child.kill('SIGKILL');
    await first.stop();

    const second = await startCollectorProcess({ ...storageEnv(), SLUICE_OUTCOMES_PENDING_HORIZON: '1m' });
    running.push(second);
    const m = await lossMap(second.url, app);
    expect(m).toMatchObject({
      generated: 3,
      generated_unrecorded: 3,
      stored: 3,
      lost: 0,
      pending: { sdk: 0, pipeline: 0 },
    });
  });

  it('events an SDK reported captured and that no stage holds any more: past the horizon, losses.unrecorded', async () => {
    const app = `unreported-${kind}-${process.pid}`;
    const c = await startCollectorProcess({ ...storageEnv(), SLUICE_OUTCOMES_PENDING_HORIZON: '1m' });
    running.push(c);
    const ts = Date.now() - 5 * 60_000;
    const minute = ts - (ts % 60_000);
    // An SDK that captured 10 logs, sent 6 and was never heard of again (no report of delivery).
    const body = {
      events: Array.from({ length: 6 }, () => log(app, { ts })),
      report: { id: randomUUID(), rows: [{ app, minute, type: 'log', captured: 10 }] },
    };
    expect((await postEvents(c.url, null, { raw: JSON.stringify(body) })).body.accepted).toBe(6);
    const m = await waitFor(
      'the report and the rows counted',
      async () => {
        const m = await lossMap(c.url, app);
        return m.generated === 10 && m.stored === 6 ? m : null;
      },
      15_000,
    ).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}: ${JSON.stringify(await lossMap(c.url, app))}`);
    });
    expect(m).toMatchObject({ generated: 10, stored: 6, lost: 4, pending: { sdk: 0, pipeline: 0 } });
    expect(m.losses.unrecorded).toEqual({ sdk: 4 });
  });

  it('an aggregated metric’s refused samples are counted in samples, apart from the map’s events', async () => {
    const app = `samples-${kind}-${process.pid}`;
    const c = await startCollectorProcess(storageEnv());
    running.push(c);
    // The SDK's defaults: every metric is folded into one summary per name and 5 s window.
    const client = createClient({ endpoint: `${c.url}/v1/events`, app, onError: () => {} });
    for (let i = 0; i < 50; i++) client.metric('render.frame_drop', i);
    for (let i = 0; i < 3; i++) client.metric('render.frame_drop', Number.NaN);
    client.log('page.loaded', 'once');
    await client.close();
    const m = await settledLossMap(c.url, app, at);
    // One summary and one log: the map counts events as stored; the refused samples beside it.
    expect(m).toMatchObject({ generated: 2, stored: 2, lost: 0, dropped_samples: { invalid: 3 } });
  });

  it('events naming another app than their key: counted in the map of the key’s app as rejected app_mismatch', async () => {
    const keyApp = `key-app-${kind}-${process.pid}`;
    const claimed = `claimed-app-${kind}-${process.pid}`;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sluice-pending-'));
    const ingest = generateKey('ingest', 'ingest', keyApp);
    const read = generateKey('read', 'reader');
    const keysFile = path.join(dir, 'keys.json');
    writeFileSync(keysFile, JSON.stringify({ keys: [ingest.entry, read.entry] }));
    const c = await startCollectorProcess({ ...storageEnv(), SLUICE_AUTH_KEYS_FILE: keysFile });
    running.push(c);
    const auth = { authorization: `Bearer ${read.secret}` };

    const answer = await postEvents(
      c.url,
      [metric(keyApp), log(claimed), errorEvent(claimed), metric(claimed)],
      {
        headers: { 'x-api-key': ingest.secret },
      },
    );
    expect(answer.status).toBe(202);
    expect(answer.body.accepted).toBe(1);

    const m = await waitFor(
      'the refusals counted',
      async () => {
        const m = await lossMap(c.url, keyApp, '', auth);
        return m.generated === 4 && m.pending.pipeline === 0 ? m : null;
      },
      15_000,
    ).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}: ${JSON.stringify(await lossMap(c.url, keyApp, '', auth))}`);
    });
    expect(m).toMatchObject({ generated: 4, stored: 1, lost: 3, pending: { sdk: 0, pipeline: 0 } });
    expect(m.losses.collector).toEqual({ app_mismatch: 3 });
    // A key holder cannot write into another app's map.
    expect(await lossMap(c.url, claimed, '', auth)).toMatchObject({ generated: 0, lost: 0 });
  });
});
