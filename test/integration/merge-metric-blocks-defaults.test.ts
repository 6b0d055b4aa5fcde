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
});
