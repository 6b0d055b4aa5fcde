import { randomBytes, randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateKey } from '../../src/auth/api-keys';
import { log, metric } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { lossMap, rowsOfApp, settledLossMap, type StorageAt } from '../support/loss-map';
import { createTestDatabase, tempSqlitePath, type TestDatabase } from '../support/postgres';

/**
 * Every value a client controls that reaches the loss map (an event's `source.app` and `ts`, a
 * client report's rows and reason keys), sent as an attacker would, with the defaults a user gets:
 * each stays one refused value, counted under a key that passed the rules of stored events (or
 * under app `''`, or the app of the ingest key), and another app's counts are still written.
 */

/** A `source.app` of 5,400 characters that does not compress (an index entry cannot hold it). */
const LONG_APP = randomBytes(4050).toString('base64');
const minuteNow = (): number => Date.now() - (Date.now() % 60_000);

async function metricValue(c: InProcessCollector, prefix: string): Promise<number> {
  const text = await (await fetch(`${c.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/** The distinct apps of the loss map's rows, straight from the database. */
async function outcomeApps(at: StorageAt): Promise<string[]> {
  const sql = 'SELECT DISTINCT app FROM event_outcomes';
  let apps: string[];
  if (at.kind === 'sqlite') {
    const db = new Database(at.path, { readonly: true });
    try {
      apps = (db.prepare(sql).all() as Array<{ app: string }>).map((r) => r.app);
    } finally {
      db.close();
    }
  } else {
    const client = new pg.Client({ connectionString: at.url });
    await client.connect();
    try {
      apps = (await client.query<{ app: string }>(sql)).rows.map((r) => r.app);
    } finally {
      await client.end();
    }
  }
  return apps.sort();
}

describe.each(['sqlite', 'postgres'] as const)('loss-map keys from hostile values (%s)', (kind) => {
  let db: TestDatabase | null = null;
  let c: InProcessCollector;
  let at: StorageAt;

  beforeEach(async () => {
    db = kind === 'postgres' ? await createTestDatabase('loss_map_keys') : null;
    const sqlitePath = tempSqlitePath('loss_map_keys');
    at = db ? { kind: 'postgres', url: db.url } : { kind: 'sqlite', path: sqlitePath };
    c = await startInProcess(db ? { SLUICE_DATABASE_URL: db.url } : { SLUICE_SQLITE_PATH: sqlitePath }, {
      defaults: 'user',
    });
  });

  afterEach(async () => {
    await c?.stop();
    await db?.drop();
    db = null;
  });

  it('an event refused for its source.app or its ts is one refused value: counted under app "" or at receipt, and another app is counted', async () => {
    const poison = [
      metric('x\u0000'),
      metric('x\ud800'),
      metric('\udc00'),
      metric(LONG_APP),
      metric('odd-times', { ts: 1e300 }),
      metric('odd-times', { ts: -1e20 }),
      metric('odd-times', { ts: 2 ** 62 }),
    ];
    const first = await postEvents(c.url, poison);
    expect(first.status).toBe(422);
    expect(first.body.rejected?.map((r) => r.reason)).toEqual([
      'source_invalid',
      'source_invalid',
      'source_invalid',
      'source_invalid',
      'ts_invalid',
      'ts_invalid',
      'ts_invalid',
    ]);
    // A name with control characters is a valid app name: its refusal (for another field) is
    // counted under it.
    const control = 'ctl\u0001\u001f\u007f';
    expect((await postEvents(c.url, [metric(control, { name: 'not a dotted name' })])).status).toBe(422);

    const good = Array.from({ length: 5 }, () => log('good-app'));
    expect((await postEvents(c.url, good)).body.accepted).toBe(5);
    const goodMap = await settledLossMap(c.url, 'good-app', at, 10_000);
    expect(goodMap).toMatchObject({ generated: 5, stored: 5, lost: 0 });

    const none = await waitFor('the refused apps counted under app ""', async () => {
      const m = await lossMap(c.url, '');
      return m.losses.collector?.source_invalid === 4 ? m : null;
    });
    expect(none.generated).toBe(4);
    const odd = await waitFor('the refused times counted at receipt', async () => {
      const m = await lossMap(c.url, 'odd-times');
      return m.losses.collector?.ts_invalid === 3 ? m : null;
    });
    expect(odd.generated).toBe(3);
    const ctl = await waitFor('the control-character app counted under its name', async () => {
      const m = await lossMap(c.url, control);
      return m.losses.collector?.name_invalid === 1 ? m : null;
    });
    expect(ctl.generated).toBe(1);
    expect(await outcomeApps(at)).toEqual(['', control, 'good-app', 'odd-times'].sort());
    expect(await metricValue(c, 'sluice_outcome_batches_total{result="failed"}')).toBe(0);
  });

  it('a client report whose row app is not an app name is refused whole, an unknown reason key is counted as "other", and another app is counted', async () => {
    const report = (rows: unknown[]): string =>
      JSON.stringify({ events: [log('good-app')], report: { id: randomUUID(), rows } });
    const minute = minuteNow();
    const row = { minute, type: 'log', captured: 1, delivered: 1 };
    for (const app of ['x\u0000', 'x\ud800', LONG_APP]) {
      const r = await postEvents(c.url, null, { raw: report([{ ...row, app }]) });
      expect(r.status).toBe(202);
    }
    // A report of the good app whose reason keys hold U+0000, a lone surrogate, 5,400 characters.
    const reasons = { 'x\u0000': 1, 'x\ud800': 1, [LONG_APP]: 1 };
    const sent = await postEvents(c.url, null, {
      raw: report([
        {
          app: 'good-app',
          minute,
          type: 'log',
          captured: 7,
          delivered: 1,
          dropped: reasons,
          rejected: reasons,
        },
      ]),
    });
    expect(sent.status).toBe(202);

    await waitFor('the good app written', async () => {
      const m = await lossMap(c.url, 'good-app');
      return m.stored === 4 && (await rowsOfApp(at, 'good-app')) === 4 ? m : null;
    });
    // The three refused reports left their requests' events `direct` (3 generated, accepted); the
    // fourth report's rows count 7 captured, 1 delivered, 3 + 3 lost under `other`.
    const m = await waitFor('the report of the good app counted', async () => {
      const a = await lossMap(c.url, 'good-app');
      return a.losses.sdk?.other === 3 && a.pending.pipeline === 0 ? a : null;
    });
    expect(m).toMatchObject({ generated: 10, stored: 4, lost: 6, pending: { sdk: 0, pipeline: 0 } });
    expect(m.losses.collector).toEqual({ other: 3 });
    expect(await outcomeApps(at)).toEqual(['good-app']);
    expect(await metricValue(c, 'sluice_outcome_batches_total{result="failed"}')).toBe(0);
  });
});

describe.each(['sqlite', 'postgres'] as const)('loss-map keys with an ingest key (%s)', (kind) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sluice-loss-map-keys-'));
  const shop = generateKey('ingest', 'shop', 'web-shop');
  const reader = generateKey('read', 'reader');
  const keysFile = path.join(dir, 'keys.json');
  writeFileSync(keysFile, JSON.stringify({ keys: [shop.entry, reader.entry] }));
  const readHeaders = { authorization: `Bearer ${reader.secret}` };
  let db: TestDatabase | null = null;
  let c: InProcessCollector;
  let at: StorageAt;

  beforeAll(async () => {
    db = kind === 'postgres' ? await createTestDatabase('loss_map_keys_auth') : null;
    const sqlitePath = tempSqlitePath('loss_map_keys_auth');
    at = db ? { kind: 'postgres', url: db.url } : { kind: 'sqlite', path: sqlitePath };
    c = await startInProcess(
      {
        ...(db ? { SLUICE_DATABASE_URL: db.url } : { SLUICE_SQLITE_PATH: sqlitePath }),
        SLUICE_AUTH_KEYS_FILE: keysFile,
      },
      { defaults: 'user' },
    );
  });

  afterAll(async () => {
    await c?.stop();
    await db?.drop();
  });

  it("an ingest key's refused events are counted under the key's app, never under the app they name", async () => {
    const withKey = { headers: { 'x-api-key': shop.secret } };
    const refused = await postEvents(c.url, [metric('x\u0000'), metric(LONG_APP), metric('victim')], withKey);
    expect(refused.body.rejected?.map((r) => r.reason)).toEqual([
      'source_invalid',
      'source_invalid',
      'app_mismatch',
    ]);
    expect((await postEvents(c.url, [log('web-shop'), log('web-shop')], withKey)).body.accepted).toBe(2);

    const shopMap = await waitFor("web-shop's loss map", async () => {
      const m = await lossMap(c.url, 'web-shop', '', readHeaders);
      return m.stored === 2 && m.pending.pipeline === 0 && m.lost === 3 ? m : null;
    });
    expect(shopMap.generated).toBe(5);
    expect(shopMap.losses.collector).toEqual({ source_invalid: 2, app_mismatch: 1 });
    expect(await rowsOfApp(at, 'web-shop')).toBe(2);
    expect((await lossMap(c.url, 'victim', '', readHeaders)).generated).toBe(0);
    expect((await lossMap(c.url, '', '', readHeaders)).generated).toBe(0);
    expect(await outcomeApps(at)).toEqual(['web-shop']);
  });
});
