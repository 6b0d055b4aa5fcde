import pg from 'pg';
import { metric, type WireEvent } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { lossMap } from '../support/loss-map';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * Resent metric samples with the merge job's defaults (a 120 s resend window, a run every 5 s), as a
 * user runs it on PostgreSQL: a resent sample is read once and counted `duplicate` at every moment,
 * whether its copy is still stored (its minute within the window) or the job has removed it (told
 * in `sluice_events_deduplicated_total`).
 */
describe('merge_metric_blocks with the defaults (postgres)', () => {
  let db: TestDatabase;
  let c: InProcessCollector;

  beforeAll(async () => {
    db = await createTestDatabase('merge_blocks_defaults');
    c = await startInProcess({ SLUICE_DATABASE_URL: db.url }, { defaults: 'user' });
  });

  afterAll(async () => {
    await c?.stop();
    await db?.drop();
  });

  const samplesRead = async (app: string): Promise<number> => {
    const r = await getJson(`${c.url}/v1/events?app=${app}&type=metric&limit=1000`);
    expect(r.status).toBe(200);
    return (r.body.events as WireEvent[]).length;
  };

  const deduplicated = async (): Promise<number> => {
    const text = await (await fetch(`${c.url}/metrics`)).text();
    return Number(/^sluice_events_deduplicated_total (\d+)$/m.exec(text)?.[1] ?? 0);
  };

  const counted = { generated: 10, stored: 5, lost: 5, losses: { storage: { duplicate: 5 } } };

  it('reads a resent sample once and counts it duplicate, before and after the job removes its copy', async () => {
    const now = Date.now();
    // Five minutes ago: past the window. Now: within it until two minutes from now.
    const old = Array.from({ length: 5 }, (_, i) => metric('merge-old', { ts: now - 300_000 + i }));
    const recent = Array.from({ length: 5 }, (_, i) => metric('merge-recent', { ts: now + i }));
    for (let send = 0; send < 2; send++) {
      const answer = await postEvents(c.url, [...old, ...recent]);
      expect(answer.status).toBe(202);
    }

    // Both copies of the recent samples are stored: read once, the second counted a duplicate.
    await waitFor(
      'both sends to be counted',
      async () => (await lossMap(c.url, 'merge-recent')).generated === 10,
    );
    expect(await lossMap(c.url, 'merge-recent')).toMatchObject(counted);
    expect(await samplesRead('merge-recent')).toBe(5);

    // The job's runs past the resend remove the old minute's copies, and only those.
    await waitFor(
      'the old copies to be removed',
      async () => {
        expect(await samplesRead('merge-old')).toBe(5);
        expect(await lossMap(c.url, 'merge-old')).toMatchObject(counted);
        return (await deduplicated()) === 5;
      },
      30_000,
    );
    expect(await lossMap(c.url, 'merge-old')).toMatchObject(counted);
    expect(await lossMap(c.url, 'merge-recent')).toMatchObject(counted);
    expect(await samplesRead('merge-recent')).toBe(5);
  });

  it("marks a busy series' minute merged as it is, then removes a copy sent after", async () => {
    const app = 'merge-marked';
    /** The app's blocks: how many are unmerged, and how many the job wrote (origin ''); null: none yet. */
    const blocks = async (): Promise<{ unmerged: number; rewritten: number } | null> => {
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ unmerged: string; rewritten: string; n: string }>(
          `SELECT count(*) FILTER (WHERE NOT merged) AS unmerged,
                  count(*) FILTER (WHERE origin = '') AS rewritten, count(*) AS n
             FROM metric_blocks WHERE app = $1`,
          [app],
        );
        const r = rows[0];
        return Number(r?.n) === 0 ? null : { unmerged: Number(r?.unmerged), rewritten: Number(r?.rewritten) };
      } finally {
        await client.end();
      }
    };
    // One request of 150 samples of a minute past the window: one block, large enough to be kept
    // as it is (marked merged, no sample written again).
    const start = Date.now() - 300_000;
    const minute = start - (start % 60_000);
    const samples = Array.from({ length: 150 }, (_, i) => metric(app, { ts: minute + i * 100 }));
    expect((await postEvents(c.url, samples)).status).toBe(202);
    await waitFor('the block merged', async () => (await blocks())?.unmerged === 0, 30_000);
    expect(await blocks()).toEqual({ unmerged: 0, rewritten: 0 });
    expect(await samplesRead(app)).toBe(150);
    const before = await deduplicated();

    // Ten of them again: read once, counted duplicate, and removed by a later run.
    expect((await postEvents(c.url, samples.slice(0, 10))).status).toBe(202);
    await waitFor('the copies removed', async () => (await deduplicated()) - before === 10, 30_000);
    expect((await blocks())?.unmerged).toBe(0);
    expect(await samplesRead(app)).toBe(150);
    expect(await lossMap(c.url, app)).toMatchObject({
      generated: 160,
      stored: 150,
      losses: { storage: { duplicate: 10 } },
    });
  });
});
