import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startCollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { acknowledgedIds, postEvents, waitFor } from '../support/http';
import { samplesNotStoredOnce } from '../support/read-back';
import { tempSqlitePath } from '../support/postgres';

describe('SQLite collector killed with SIGKILL under load', () => {
  const file = tempSqlitePath('sqlite_kill');
  afterAll(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));

  it('the file passes integrity_check and holds every event acknowledged with 202 (SLUICE_ACK=stored), once', async () => {
    const c = await startCollectorProcess(
      { SLUICE_SQLITE_PATH: file, SLUICE_ACK: 'stored' },
      { defaults: 'user' },
    );
    const acknowledged: string[] = [];
    let requests = 0;
    const client = async (k: number) => {
      for (let i = 0; i < 2000; i++) {
        // One app per request: the rate limit per app (100/s by default) is not what this measures.
        const batch = Array.from({ length: 20 }, () => metric(`crash-${k}-${i}`));
        const res = await postEvents(c.url, batch).catch(() => null);
        if (res === null) return; // the process is gone
        requests++;
        acknowledged.push(...acknowledgedIds(batch, res));
      }
    };
    const clients = [0, 1, 2, 3].map(client);
    await waitFor('load under way', () => requests >= 50, 15_000);
    c.child.kill('SIGKILL');
    await c.exited;
    await Promise.all(clients);

    const db = new Database(file);
    try {
      expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      expect(acknowledged.length).toBeGreaterThan(200);
      expect(samplesNotStoredOnce(db, acknowledged)).toEqual([]);
    } finally {
      db.close();
    }
  });
});
