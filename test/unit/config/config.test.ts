import { ConfigError, flagsToEnv, settingsHelp, loadConfig } from '../../../src/config/load';
import { SETTINGS } from '../../../src/config/settings';

describe('loadConfig', () => {
  it('takes a read standby only next to a primary, and never prints its password', () => {
    const standby = 'postgres://sluice:secret@standby:5432/sluice';
    expect(() => loadConfig({ SLUICE_DATABASE_READ_URL: standby })).toThrow(
      /^SLUICE_DATABASE_READ_URL="postgres:\/\/sluice:\*+@standby:5432\/sluice" needs SLUICE_DATABASE_URL/,
    );
    const c = loadConfig({ SLUICE_DATABASE_URL: 'postgres://p/sluice', SLUICE_DATABASE_READ_URL: standby });
    expect(c.databaseReadUrl).toBe(standby);
    expect(c.readStandbyMaxLagMs).toBe(10_000);
    expect(loadConfig({}).databaseReadUrl).toBeNull();
  });

  it('gives tier 1 defaults with no configuration at all', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.databaseUrl).toBeNull();
    expect(c.sqlitePath).toBe('./data/sluice.db');
    expect(c.laneCapacity).toBe(10_000);
    expect(c.maxBodyBytes).toBe(1024 * 1024);
    expect(c.maxEventsPerRequest).toBe(1000);
    expect(c.ack).toBe('queued');
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('parses units and lets flags win over the environment', () => {
    const c = loadConfig({ SLUICE_QUEUE_MAX_BYTES: '64MiB', SLUICE_RETENTION_RAW: '30d', SLUICE_PORT: '1' }, [
      '--port',
      '9000',
      '--flush-interval-ms=250',
    ]);
    expect(c.laneMaxBytes).toBe(64 * 1024 * 1024);
    expect(c.retentionRawMs).toBe(30 * 86_400_000);
    expect(c.port).toBe(9000);
    expect(c.flushIntervalMs).toBe(250);
  });

  it.each([
    ['SLUICE_PORT', 'abc'],
    ['SLUICE_PORT', '70000'],
    ['SLUICE_QUEUE_CAPACITY', '0'],
    ['SLUICE_QUEUE_MAX_BYTES', '12 parsecs'],
    ['SLUICE_ACK', 'maybe'],
    ['SLUICE_DATABASE_URL', 'mysql://x'],
    ['SLUICE_LOG_LEVEL', 'loud'],
    ['SLUICE_FLUSH_INTERVAL_MS', '-5'],
    ['SLUICE_CONSOLE', 'yes'],
    ['SLUICE_COMPACT_OUTCOMES_SETTLE_MS', '-1'],
    ['SLUICE_COMPACT_OUTCOMES_SETTLE_MS', '2d'],
    ['SLUICE_COMPACT_OUTCOMES_MAX_ROWS_PER_RUN', '0'],
    ['SLUICE_JOB_COMPACT_OUTCOMES_INTERVAL_MS', 'often'],
  ])('rejects %s=%s naming the variable', (variable, value) => {
    expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^${variable}=`));
  });

  it('takes 1, 3 or 5 NATS replicas (default 1) and says why 2 is refused', () => {
    expect(loadConfig({}).natsReplicas).toBe(1);
    expect(loadConfig({ SLUICE_NATS_REPLICAS: '3' }).natsReplicas).toBe(3);
    expect(loadConfig({ SLUICE_NATS_REPLICAS: ' 5 ' }).natsReplicas).toBe(5);
    for (const bad of ['2', '4', '0', '7', 'three']) {
      expect(() => loadConfig({ SLUICE_NATS_REPLICAS: bad })).toThrow(
        /^SLUICE_NATS_REPLICAS=.* must be 1, 3 or 5 \(a replicated stream needs a majority/,
      );
    }
  });

  it('compacts the loss map every minute, leaving the current and previous minute, 100 000 rows a run', () => {
    const c = loadConfig({});
    expect(c.jobCompactOutcomesIntervalMs).toBe(60_000);
    expect(c.compactOutcomesSettleMs).toBe(60_000);
    expect(c.compactOutcomesMaxRowsPerRun).toBe(100_000);
    expect(loadConfig({ SLUICE_COMPACT_OUTCOMES_SETTLE_MS: '5m' }).compactOutcomesSettleMs).toBe(300_000);
    expect(() => loadConfig({ SLUICE_COMPACT_OUTCOMES_SETTLE_MS: 'soon' })).toThrow(
      /^SLUICE_COMPACT_OUTCOMES_SETTLE_MS="soon" must be a duration between 0 and 1d/,
    );
  });

  it('serves the console by default; SLUICE_CONSOLE=off turns it off', () => {
    expect(loadConfig({}).console).toBe('on');
    expect(loadConfig({ SLUICE_CONSOLE: 'off' }).console).toBe('off');
    expect(loadConfig({}, ['--console', 'off']).console).toBe('off');
  });

  it('fits the default batch to a smaller queue', () => {
    expect(loadConfig({ SLUICE_QUEUE_CAPACITY: '500' }).batchSize).toBe(500);
    expect(loadConfig({}).batchSize).toBe(2000);
  });

  it('rejects a batch larger than the queue', () => {
    expect(() => loadConfig({ SLUICE_QUEUE_CAPACITY: '10', SLUICE_BATCH_SIZE: '20' })).toThrow(
      /SLUICE_BATCH_SIZE/,
    );
  });

  it('sizes each PostgreSQL pool on its own: the writer, the reads (bounded wait and timeout)', () => {
    const pg = { SLUICE_DATABASE_URL: 'postgres://localhost/x' };
    const config = loadConfig({ ...pg, SLUICE_WRITE_CONCURRENCY: '4', SLUICE_PG_READ_POOL_SIZE: '2' });
    expect([config.writeConcurrency, config.readPoolSize, config.readTimeoutMs, config.readWaitMs]).toEqual([
      4, 2, 5000, 250,
    ]);
    expect(() => loadConfig({ SLUICE_WRITE_CONCURRENCY: '0' })).toThrow(/SLUICE_WRITE_CONCURRENCY/);
    expect(() => loadConfig({ ...pg, SLUICE_PG_READ_POOL_SIZE: '0' })).toThrow(/SLUICE_PG_READ_POOL_SIZE/);
    expect(() => loadConfig({ ...pg, SLUICE_PG_READ_WAIT_MS: '0' })).toThrow(/SLUICE_PG_READ_WAIT_MS/);
    expect(() => loadConfig({ ...pg, SLUICE_PG_READ_TIMEOUT_MS: '10' })).toThrow(/SLUICE_PG_READ_TIMEOUT_MS/);
  });

  it('rejects unknown flags and flags without a value', () => {
    expect(() => flagsToEnv(['--prot', '1'])).toThrow(/not a known option/);
    expect(() => flagsToEnv(['--port'])).toThrow(/needs a value/);
    expect(() => flagsToEnv(['--port', '--host', '::1'])).toThrow(/SLUICE_PORT="" needs a value/);
    expect(() => flagsToEnv(['--port', '1', '--port=2'])).toThrow(/SLUICE_PORT="" is given twice/);
    expect(() => flagsToEnv(['serve'])).toThrow(/not a known option/);
    expect(flagsToEnv(['--port=1', '--host', '::1'])).toEqual({ SLUICE_PORT: '1', SLUICE_HOST: '::1' });
  });

  it('lists every variable in --help', () => {
    const text = settingsHelp();
    for (const s of Object.values(SETTINGS)) expect(text).toContain(s.env);
  });
});

describe('SLUICE_* variables that are not settings', () => {
  it('refuses a typo with the closest setting, and a flag typo with the closest flag', () => {
    expect(() => loadConfig({ SLUICE_QUEUE_CAPACTY: '5' })).toThrow(/did you mean SLUICE_QUEUE_CAPACITY\?/);
    expect(() => loadConfig({ SLUICE_ZZZ: '5' })).toThrow(
      /^SLUICE_ZZZ="5" is not a setting; \(sluice --help/,
    );
    expect(() => flagsToEnv(['--prot', '1'])).toThrow(/did you mean --port\?/);
  });

  it('accepts the variables of sluice cluster and docker-compose.yml that are not collector settings', () => {
    expect(() =>
      loadConfig({ SLUICE_STATS_USER: 'a', SLUICE_STATS_PASSWORD: 'b', SLUICE_GRAFANA_DB_PASSWORD: 'c' }),
    ).not.toThrow();
  });

  it('ignores variables of other programs', () => {
    expect(() => loadConfig({ PORT: '1', SLUICEPORT: '2', NODE_OPTIONS: '' })).not.toThrow();
  });
});

describe('units', () => {
  it('takes weeks and days, and shows limits in units', () => {
    expect(loadConfig({ SLUICE_RETENTION_RAW: '1w' }).retentionRawMs).toBe(7 * 86_400_000);
    expect(loadConfig({ SLUICE_RETENTION_1M: '90d' }).retention1mMs).toBe(90 * 86_400_000);
    expect(() => loadConfig({ SLUICE_NATS_MAX_AGE: '0' })).toThrow(/between 1s and 365d \(a number of h/);
  });

  it('reads MB as 10^6 bytes and MiB as 2^20', () => {
    expect(loadConfig({ SLUICE_MAX_BODY_BYTES: '2MB' }).maxBodyBytes).toBe(2_000_000);
    expect(loadConfig({ SLUICE_MAX_BODY_BYTES: '2MiB' }).maxBodyBytes).toBe(2 * 1024 * 1024);
    expect(loadConfig({ SLUICE_MAX_BODY_BYTES: '2M' }).maxBodyBytes).toBe(2 * 1024 * 1024);
  });
});
