import { startLine } from '../../../src/compose/start-line';
import { loadConfig } from '../../../src/config/load';

const line = (env: Record<string, string>, keys = false): string =>
  startLine(loadConfig(env), { url: 'http://127.0.0.1:8080', port: 8080, otlpPort: 4318, keys }).message;

describe('the start line', () => {
  it('says mode, tier, storage, ports, auth and limits in one line', () => {
    const text = line({});
    expect(text).not.toContain('\n');
    expect(text).toContain('0.0.0.0 (every interface) port 8080, OTLP/HTTP port 4318');
    expect(text).toContain('tier 1, mode direct, SQLite ./data/sluice.db, ack queued');
    expect(text).toContain(
      'auth off: writes open to every client; reads, console and /pipeline loopback clients only (protected mode',
    );
    expect(text).toContain('limits: 100 events/s per app; 10000 distinct apps a minute');
  });

  it('names the tier and hides the database password', () => {
    const pg = { SLUICE_DATABASE_URL: 'postgres://u:secret@db:5432/sluice' };
    expect(line(pg)).toContain('tier 2, mode direct, PostgreSQL postgres://u:***@db:5432/sluice');
    expect(line(pg)).not.toContain('secret');
    expect(line({ ...pg, SLUICE_REDIS_URL: 'redis://r:6379' })).toContain('tier 3');
    expect(line({ ...pg, SLUICE_REDIS_URL: 'redis://r:6379' })).toContain('counted in Redis');
    expect(line({ ...pg, SLUICE_MODE: 'ingest', SLUICE_NATS_URL: 'nats://n:4222' })).toContain('tier 4');
  });

  it('says who reads with keys on, and warns when protected mode is off', () => {
    expect(line({}, true)).toContain('auth on: writes ingest keys; reads, console and /pipeline read tokens');
    expect(line({ SLUICE_PROTECTED_MODE: 'off' })).toContain('anyone who reaches the port reads every event');
    expect(line({ SLUICE_RATE_LIMIT: '0' })).toContain('no rate limit');
    expect(line({ SLUICE_MAX_APPS_PER_MINUTE: '0' })).toContain('no bound on distinct apps');
  });
});
