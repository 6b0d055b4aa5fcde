import { formatLsn, parseLsn, replayTarget } from '../../../src/storage/postgres/wal-position';

describe('WAL positions', () => {
  it('parses and writes X/Y as PostgreSQL does, and orders past 32 bits', () => {
    expect(parseLsn('0/16B3748')).toBe(0x16b3748n);
    expect(parseLsn('1/0')).toBe(1n << 32n);
    expect(parseLsn('1/0') > parseLsn('0/FFFFFFFF')).toBe(true);
    expect(formatLsn(parseLsn('A/CA00FF28'))).toBe('A/CA00FF28');
    expect(() => parseLsn('12345')).toThrow(RangeError);
  });

  it('a commit that ended at a page boundary is held once the standby replayed to the boundary', () => {
    const page = 8192n;
    const segment = 16n * 1024n * 1024n;
    // Insert position just past a page header: the record ended at the boundary.
    expect(replayTarget(5n * page + 24n)).toBe(5n * page);
    expect(replayTarget(3n * segment + 40n)).toBe(3n * segment);
    // Anywhere else the insert position is the target.
    expect(replayTarget(5n * page + 32n)).toBe(5n * page + 32n);
    expect(replayTarget(3n * segment + 24n)).toBe(3n * segment + 24n);
  });
});
