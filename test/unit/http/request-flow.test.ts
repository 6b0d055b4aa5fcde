import { ApiKeyRing, generateKey } from '../../../src/auth/api-keys';
import { requestFlow } from '../../../src/http/request-flow';

/** The flow the shed rule shares the process among: a valid ingest key's app, Sentry DSN keys included. */
describe('requestFlow', () => {
  const ingest = generateKey('ingest', 'shop-key', 'web-shop');
  const dsn = generateKey('ingest', 'checkout_dsn', 'checkout');
  const ring = ApiKeyRing.parse(JSON.stringify({ keys: [ingest.entry, dsn.entry] }), 'keys.json');
  const post = (url: string, headers: Record<string, string> = {}) => ({ method: 'POST', url, headers });

  it('names the app of the key a request presents, in X-Api-Key or as a Sentry DSN key', () => {
    const flow = requestFlow(ring);
    expect(flow(post('/v1/events', { 'x-api-key': ingest.secret }))).toBe('key:web-shop');
    expect(flow(post('/api/1/envelope/?sentry_key=checkout_dsn'))).toBe('key:checkout');
    expect(flow(post('/api/1/store/', { 'x-sentry-auth': 'Sentry sentry_key=checkout_dsn' }))).toBe(
      'key:checkout',
    );
    expect(flow(post('/v1/events?sentry_key=checkout_dsn', { 'x-sluice-app': 'a' }))).toBe('app:a');
    expect(flow(post('/api/1/envelope/?sentry_key=nobody'))).toBe('');
  });

  it('reads no key when auth is off', () => {
    expect(requestFlow(null)(post('/api/1/envelope/?sentry_key=checkout_dsn'))).toBe('');
  });
});
