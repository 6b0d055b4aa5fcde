import { createLogger } from '../../src/log/logger';
import { createPool } from '../../src/storage/postgres/pool';
import { createTestDatabase, type TestDatabase } from '../support/postgres';

/**
 * Every connection of Sluice's pools runs with JIT compilation off (pool.ts): on tens of millions
 * of rows the planner's cost of an events page passed `jit_above_cost`, and compiling it took
 * seconds for milliseconds of execution. The server's own default here is on.
 */
describe('PostgreSQL connection options', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('connection_options');
  });

  afterAll(async () => {
    await db.drop();
  });

  it('the server defaults to JIT on; a pool connection has it off, with its other settings kept', async () => {
    const pool = createPool(
      { connectionString: db.url, poolSize: 1, timeoutMs: 4321, name: 'read' },
      createLogger('silent'),
    );
    try {
      const { rows } = await pool.query<{ jit: string; server: string; timeout: string; app: string }>(
        `SELECT current_setting('jit') AS jit, (SELECT boot_val FROM pg_settings WHERE name = 'jit') AS server,
                current_setting('statement_timeout') AS timeout, current_setting('application_name') AS app`,
      );
      expect(rows[0]).toEqual({ jit: 'off', server: 'on', timeout: '4321ms', app: 'sluice:read' });
    } finally {
      await pool.end();
    }
  });
});
