import { MAX_TIMESTAMP_MS, parseTimestamp } from '../../../src/http/timestamp';

describe('parseTimestamp (from / to of the read API)', () => {
  it.each([
    ['0', 0],
    ['1764590400123', 1764590400123],
    [String(MAX_TIMESTAMP_MS), MAX_TIMESTAMP_MS],
    ['2026-12-02', Date.UTC(2026, 11, 2)],
    ['2026-12-02T12:00Z', Date.UTC(2026, 11, 2, 12)],
    ['2026-12-02T12:00:05Z', Date.UTC(2026, 11, 2, 12, 0, 5)],
    ['2026-12-02T12:00:05.1Z', Date.UTC(2026, 11, 2, 12, 0, 5, 100)],
    ['2026-12-02T12:00:05.123456789Z', Date.UTC(2026, 11, 2, 12, 0, 5, 123)],
    ['2026-12-02T13:30:00+01:30', Date.UTC(2026, 11, 2, 12)],
    ['2026-12-02T10:00:00-02:00', Date.UTC(2026, 11, 2, 12)],
    ['2024-02-29', Date.UTC(2024, 1, 29)],
  ])('%s → %d', (text, ms) => {
    expect(parseTimestamp(text)).toBe(ms);
  });

  it.each([
    '',
    '-1',
    '1.5',
    String(MAX_TIMESTAMP_MS + 1),
    '12345678901234567',
    '2026-12-02T12:00:00',
    '2026-02-30',
    '2025-02-29',
    '2026-13-01',
    '2026-12-02T24:00:00Z',
    '2026-12-02T12:60:00Z',
    '2026-12-02 12:00:00Z',
    '2026-12-02T12:00:00+25:00',
    'yesterday',
    '1969-12-31',
    'Tue, 01 Dec 2026 00:00:00 GMT',
  ])('refuses %j', (text) => {
    expect(parseTimestamp(text)).toBeNull();
  });
});
