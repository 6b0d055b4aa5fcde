/**
 * The settings a user types, checked by the process they start: a mistyped or retired `SLUICE_*`
 * variable stops it with the name it meant, and durations and sizes take the units people write.
 */
import { freePort } from '../../src/dev-cluster/free-port';
import { tempSqlitePath } from '../support/postgres';
import { runCli } from '../support/run-cli';
import { spawnSluice, waitUntilReady } from '../support/sluice-process';

describe('sluice serve refuses SLUICE_* variables that are not settings', () => {
  it('names the closest setting of a typo (exit 2, at once)', async () => {
    const run = await runCli(['serve'], { SLUICE_PORTT: '1' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/SLUICE_PORTT="1" is not a setting; did you mean SLUICE_PORT\?/);
    expect(run.tookMs).toBeLessThan(5000);
  });

  it.each([
    ['SLUICE_LATENESS_MS', '60000', /retired.*invalidation log/],
    ['SLUICE_PG_POOL_SIZE', '10', /retired.*SLUICE_WRITE_CONCURRENCY.*SLUICE_PG_READ_POOL_SIZE/],
    ['SLUICE_REDIS_RETRY_MS', '50', /retired.*SLUICE_REDIS_TIMEOUT_MS/],
  ])('says what replaced the retired %s', async (variable, value, replaced) => {
    const run = await runCli(['serve'], { [variable]: value });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${variable}="${value}"`);
    expect(run.stderr).toMatch(replaced);
  });

  it('shows duration limits in the units people write', async () => {
    const run = await runCli(['serve'], { SLUICE_RETENTION_RAW: '30m' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/SLUICE_RETENTION_RAW="30m" must be a duration between 1h and 3650d/);
  });

  it('says which sizes are powers of 1000 and which of 1024', async () => {
    const run = await runCli(['serve'], { SLUICE_MAX_BODY_BYTES: '1TB' });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/between 1KiB and 256MiB/);
    expect(run.stderr).toContain('MB = 1000000 bytes');
    expect(run.stderr).toContain('MiB = 1048576 bytes');
  });

  it('starts with weeks and days, and with sizes in MB', async () => {
    const port = await freePort();
    const p = spawnSluice('serve', {
      SLUICE_PORT: String(port),
      SLUICE_OTLP_PORT: '0',
      SLUICE_SQLITE_PATH: tempSqlitePath('settings-units'),
      SLUICE_RETENTION_RAW: '1w',
      SLUICE_RETENTION_1M: '90d',
      SLUICE_MAX_BODY_BYTES: '2MB',
      SLUICE_DRAIN_DELAY_MS: '0',
    });
    try {
      await waitUntilReady(p, 'collector', `http://127.0.0.1:${port}`, 15_000);
    } finally {
      expect(await p.stop()).toBe(0);
    }
  });
});
