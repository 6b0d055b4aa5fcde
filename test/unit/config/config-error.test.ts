import { ConfigError, loadConfig } from '../../../src/config/load';
import { redactSecrets } from '../../../src/config/redact-secrets';

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('a bad SLUICE_DATABASE_URL is printed without its password', () => {
  it.each([
    ['a wrong scheme', 'mysql://sluice:hunter2@db:3306/sluice'],
    ['an unencoded @ in the password', 'mysql://sluice:hun@ter2@db/sluice'],
    ['a URL that does not parse', 'postgres://sluice:hun ter2@db:port/sluice'],
    ['a password with / and #', 'mysql://sluice:hun/ter#2@db/sluice'],
    ['a password= parameter', 'mysql://db/sluice?user=sluice&password=hunter2'],
    ['libpq key/value form', "host=db user=sluice password='hunter2' dbname=sluice"],
  ])('%s', (_label, url) => {
    const message = messageOf(() => loadConfig({ SLUICE_DATABASE_URL: url }));
    expect(message).toMatch(/^SLUICE_DATABASE_URL=/);
    expect(message).not.toMatch(/hun.?ter|ter#?2/);
    expect(message).toContain('***');
  });

  it('keeps what helps to find the mistake: scheme, user, host, database', () => {
    expect(redactSecrets('mysql://sluice:hunter2@db:3306/sluice')).toBe('mysql://sluice:***@db:3306/sluice');
    expect(redactSecrets('postgres://sluice@db/sluice')).toBe('postgres://sluice@db/sluice');
    expect(redactSecrets('postgres://db:5432/sluice')).toBe('postgres://db:5432/sluice');
    expect(redactSecrets('postgres://db/x?password=a&sslmode=require')).toBe(
      'postgres://db/x?password=***&sslmode=require',
    );
  });

  it('masks the value a ConfigError keeps, not only its message', () => {
    const err = new ConfigError('SLUICE_REDIS_URL', 'redis://:s3cret@cache:6379', 'is not reachable');
    expect(err.value).toBe('redis://:***@cache:6379');
    expect(err.message).not.toContain('s3cret');
  });
});
