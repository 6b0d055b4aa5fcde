import type { IncomingMessage } from 'node:http';
import { isSentryIngest } from '../../../src/http/sentry/post-sentry';
import { parseEnvelope, EnvelopeError } from '../../../src/sentry/envelope';
import { mapSentryEvent } from '../../../src/sentry/map-event';
import { mapSentryLogs } from '../../../src/sentry/map-logs';
import { clientReportCounts } from '../../../src/sentry/client-report';
import { rateLimitsHeader } from '../../../src/sentry/rate-limits';
import type { TelemetryEvent } from '../../../src/events/types';
import { LIMITS, NOW, expectValidAsBuilt } from '../otlp/fixtures';

const ctx = { limits: LIMITS, app: 'web-shop', now: NOW };

function eventOf(payload: unknown): TelemetryEvent {
  const m = mapSentryEvent(payload, ctx);
  if (!('event' in m)) throw new Error(`not mapped: ${m.unmapped}`);
  expectValidAsBuilt(m.event);
  return m.event;
}

describe('Sentry event mapping', () => {
  it('maps an exception chain to kind, message and a stack whose frames are most recent first', () => {
    const e = eventOf({
      event_id: 'AB8A1E6AC7C64F0F9B1B3D2E1F0A9B8C',
      timestamp: NOW / 1000 - 1.5,
      platform: 'python',
      release: 'shop@1.2.3',
      environment: 'prod',
      logger: 'payments.card',
      tags: [
        ['route', '/checkout'],
        ['attempt', 2],
      ],
      contexts: { runtime: { name: 'CPython', version: '3.11', build: 'long' }, trace: { trace_id: 'abc' } },
      exception: {
        values: [
          { type: 'KeyError', value: "'card'" },
          {
            type: 'PaymentError',
            value: 'card declined',
            stacktrace: {
              frames: [
                { function: 'main', filename: 'app.py', lineno: 10 },
                { function: 'charge', filename: 'pay.py', lineno: 3, colno: 7 },
              ],
            },
          },
        ],
      },
    });
    expect(e).toMatchObject({
      id: 'ab8a1e6a-c7c6-4f0f-9b1b-3d2e1f0a9b8c',
      type: 'error',
      name: 'payments.card',
      ts: NOW - 1500,
      app: 'web-shop',
      version: 'shop@1.2.3',
      env: 'prod',
      message: null,
      error: {
        kind: 'PaymentError',
        message: 'card declined',
        stack:
          "PaymentError: card declined\n    at charge (pay.py:3:7)\n    at main (app.py:10)\nCaused by: KeyError: 'card'",
      },
    });
    expect({ ...e.attributes }).toEqual({
      attempt: 2,
      route: '/checkout',
      'runtime.name': 'CPython',
      'runtime.version': '3.11',
      'sentry.level': 'error',
      'sentry.platform': 'python',
      trace_id: 'abc',
    });
  });

  it('a level below error is a log with its message; logentry and a naive UTC time are read', () => {
    const e = eventOf({
      level: 'warning',
      timestamp: new Date(NOW - 60_000).toISOString().replace('Z', ''),
      logentry: { formatted: 'cart 42 updated', message: 'cart %s updated' },
    });
    expect(e).toMatchObject({
      type: 'log',
      name: 'sentry.event',
      message: 'cart 42 updated',
      ts: NOW - 60_000,
      error: null,
    });
  });

  it('an event without id or time is the now of the collector and an id digested from the payload', () => {
    const a = eventOf({ message: 'boom' });
    const b = eventOf({ message: 'boom' });
    expect(a.id).toBe(b.id);
    expect(a).toMatchObject({ type: 'error', ts: NOW, error: { message: 'boom', kind: null, stack: null } });
  });

  it('hostile values are cut or dropped: reserved keys, long tags, hundreds of tags, non-text levels', () => {
    const tags: Record<string, unknown> = { __proto__: 'x', constructor: 'y', ['k'.repeat(500)]: 'long key' };
    for (let i = 0; i < 200; i++) tags[`t${i}`] = 'v'.repeat(5000);
    const m = mapSentryEvent(
      { level: 42, release: 'r'.repeat(1000), message: 'm'.repeat(10_000), tags, exception: 'nope' },
      ctx,
    );
    if (!('event' in m)) throw new Error('not mapped');
    expectValidAsBuilt(m.event);
    expect(Object.keys(m.event.attributes)).toHaveLength(LIMITS.maxAttributes);
    expect(m.droppedAttributes).toBeGreaterThan(150);
    expect(Object.getPrototypeOf(m.event.attributes)).toBeNull();
  });

  it('refuses what is not an event or lies outside the time window', () => {
    expect(mapSentryEvent([1, 2], ctx)).toEqual({ unmapped: 'not_an_event' });
    expect(mapSentryEvent({ timestamp: 1 }, ctx)).toEqual({ unmapped: 'ts_out_of_range' });
  });
});

describe('Sentry logs', () => {
  it('each log is a log event with its level, body, release and environment', () => {
    const mapped = mapSentryLogs(
      {
        items: [
          {
            timestamp: NOW / 1000,
            level: 'info',
            body: 'checkout started',
            trace_id: 't1',
            attributes: {
              cart: { value: 3, type: 'integer' },
              'sentry.release': { value: '2.0.0', type: 'string' },
              'sentry.environment': { value: 'prod', type: 'string' },
              'sentry.sdk.name': { value: 'sentry.javascript.node', type: 'string' },
            },
          },
          { timestamp: 'yesterday', body: 'no time' },
        ],
      },
      ctx,
    );
    expect(mapped.unmapped).toBe(1);
    expect(mapped.events).toHaveLength(1);
    const e = mapped.events[0] as TelemetryEvent;
    expectValidAsBuilt(e);
    expect(e).toMatchObject({
      type: 'log',
      name: 'sentry.log',
      message: 'checkout started',
      version: '2.0.0',
      env: 'prod',
    });
    expect({ ...e.attributes }).toEqual({ cart: 3, 'sentry.level': 'info', trace_id: 't1' });
  });
});

describe('Sentry envelopes', () => {
  it('reads items with and without a length, and a payload holding newlines', () => {
    const body = Buffer.from(
      '{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc"}\n' +
        '{"type":"attachment","length":6}\nab\ncd\n\n' +
        '{"type":"event"}\n{"message":"hi"}\n',
    );
    const env = parseEnvelope(body, 10);
    expect(env.header.event_id).toBe('9ec79c33ec9942ab8353589fcb2e04dc');
    expect(env.items.map((i) => [i.type, i.payload.toString()])).toEqual([
      ['attachment', 'ab\ncd\n'],
      ['event', '{"message":"hi"}'],
    ]);
  });

  it('refuses a header that is not JSON, a length past the end, and too many items', () => {
    expect(() => parseEnvelope(Buffer.from('not json\n'), 10)).toThrow(EnvelopeError);
    expect(() => parseEnvelope(Buffer.from('{}\n{"type":"event","length":99}\n{}'), 10)).toThrow(
      EnvelopeError,
    );
    expect(() => parseEnvelope(Buffer.from('{}\n{"type":"x"}\n{}\n{"type":"x"}\n{}\n'), 1)).toThrow(
      /more than 1 items/,
    );
  });
});

describe('Sentry client reports', () => {
  it('counts each discarded error or log as captured and dropped by the SDK, by reason', () => {
    const counts = clientReportCounts(
      {
        timestamp: NOW / 1000,
        discarded_events: [
          { reason: 'ratelimit_backoff', category: 'log_item', quantity: 5 },
          { reason: 'sample_rate', category: 'error', quantity: 2 },
          { reason: 'made_up', category: 'default', quantity: 1 },
          { reason: 'queue_overflow', category: 'transaction', quantity: 9 },
          { reason: 'sample_rate', category: 'error', quantity: -1 },
        ],
      },
      'web-shop',
      NOW,
    );
    const row = (type: string, outcome: string, reason: string, count: number) => ({
      app: 'web-shop',
      minute: NOW,
      type,
      outcome,
      reason,
      origin: 'sdk',
      count,
    });
    expect(counts).toEqual([
      row('log', 'captured', '', 5),
      row('log', 'sdk_dropped', 'ratelimit_backoff', 5),
      row('error', 'captured', '', 2),
      row('error', 'sdk_dropped', 'sampled', 2),
      row('error', 'captured', '', 1),
      row('error', 'sdk_dropped', 'other', 1),
    ]);
  });
});

describe('X-Sentry-Rate-Limits', () => {
  it('names the limited categories, never error; refused errors name every category', () => {
    expect(rateLimitsHeader(6, new Set(['log']), 'rate_limited')).toBe(
      '6:default;log_item;transaction;span:key:rate_limited',
    );
    expect(rateLimitsHeader(2, new Set(['error', 'log']), 'queue_full')).toBe('2::organization:queue_full');
  });
});

describe('the overload gate', () => {
  it('sheds POSTs to the Sentry endpoints, as the router matches them', () => {
    const req = (method: string, url: string) => ({ method, url }) as IncomingMessage;
    expect(isSentryIngest(req('POST', '/api/1/envelope/?sentry_key=k'))).toBe(true);
    expect(isSentryIngest(req('POST', '/api/1/store/'))).toBe(true);
    expect(isSentryIngest(req('GET', '/api/1/store/'))).toBe(false);
    expect(isSentryIngest(req('POST', '/api/1/envelope'))).toBe(false);
    expect(isSentryIngest(req('POST', '/API/1/envelope/'))).toBe(false);
  });
});
