import { READ_LIMITS } from '../../src/read/read-limits';
import { startInProcess, type InProcessCollector } from '../support/in-process';
import { tempSqlitePath } from '../support/postgres';

/*
 * `GET /v1/outcomes?by=minute` answers a loss map per minute: its window is bounded (a day is
 * some 400 KB), the window of one map is not.
 */

let c: InProcessCollector;

beforeAll(async () => {
  c = await startInProcess({ SLUICE_SQLITE_PATH: tempSqlitePath('outcomes_minutes') });
});

afterAll(async () => {
  await c?.stop();
});

it('takes by=minute over at most a day as asked, one map over a month', async () => {
  const to = Date.now();
  const get = (from: number, by: string): Promise<Response> =>
    fetch(`${c.url}/v1/outcomes?app=a&from=${from}&to=${to}${by}`);
  const day = READ_LIMITS.maxOutcomeMinutesWindowMs;
  expect((await get(to - day, '&by=minute')).status).toBe(200);
  const over = await get(to - day - 60_000, '&by=minute');
  expect(over.status).toBe(400);
  expect(((await over.json()) as { message: string }).message).toContain('"from"');
  expect((await get(to - 30 * day, '')).status).toBe(200);
});
