import { sluiceName, withSuffix } from '../../../src/otlp/names';

describe('OTel names → Sluice dotted names', () => {
  it.each([
    ['GET /users/:id', 'GET.users.id'],
    ['http.server.duration', 'http.server.duration'],
    ['@opentelemetry/instrumentation-http', 'opentelemetry.instrumentation-http'],
    ['  db  query  ', 'db.query'],
    ['orders_total', 'orders_total'],
    ['a..b', 'a.b'],
    ['größe', 'gr.e'],
  ])('%s → %s', (otel, sluice) => {
    expect(sluiceName(otel, 128, 'fallback')).toBe(sluice);
  });

  it('a name with no letter or digit takes the fallback', () => {
    expect(sluiceName('/ :: /', 128, 'otel.log')).toBe('otel.log');
    expect(sluiceName('', 128, 'otel.log')).toBe('otel.log');
  });

  it('a long name is cut at a part boundary, or hard when one part is too long', () => {
    expect(sluiceName('aaaa.bbbb.cccc', 10, 'f')).toBe('aaaa.bbbb');
    expect(sluiceName('x'.repeat(20), 10, 'f')).toBe('x'.repeat(10));
  });

  it('a suffix always fits', () => {
    expect(withSuffix('orders', '_cumulative', 128)).toBe('orders_cumulative');
    expect(withSuffix('x'.repeat(128), '_cumulative', 128)).toHaveLength(128);
  });
});
