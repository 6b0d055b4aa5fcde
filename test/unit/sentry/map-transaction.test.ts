import { mapSentrySpans, mapSentryTransaction } from '../../../src/sentry/map-transaction';
import { LIMITS, NOW, expectValidAsBuilt } from '../otlp/fixtures';

const ctx = { limits: LIMITS, app: 'web-shop', now: NOW };
const s = (ms: number): number => (NOW + ms) / 1000;

describe('Sentry transactions and spans as duration samples', () => {
  it('maps a transaction and its spans, with the attributes of each', () => {
    const m = mapSentryTransaction(
      {
        event_id: 'AB8A1E6AC7C64F0F9B1B3D2E1F0A9B8C',
        type: 'transaction',
        transaction: 'GET /users/:id',
        start_timestamp: s(-250),
        timestamp: s(-50),
        release: 'shop@1.2.3',
        environment: 'prod',
        contexts: { trace: { trace_id: 't1', span_id: 'a1', op: 'http.server', status: 'ok' } },
        spans: [
          {
            span_id: 'b1',
            trace_id: 't1',
            op: 'db',
            description: 'SELECT 1',
            start_timestamp: s(-200),
            timestamp: s(-120),
          },
          { span_id: 'b2', trace_id: 't1', start_timestamp: s(-100), timestamp: s(-110) },
        ],
      },
      ctx,
    );
    for (const e of m.events) expectValidAsBuilt(e);
    expect(m.events).toEqual([
      expect.objectContaining({
        id: 'ab8a1e6a-c7c6-4f0f-9b1b-3d2e1f0a9b8c',
        type: 'metric',
        name: 'sentry.transaction.duration',
        ts: NOW - 50,
        value: 200,
        version: 'shop@1.2.3',
        env: 'prod',
        attributes: { transaction: 'GET /users/:id', op: 'http.server', status: 'ok', trace_id: 't1' },
      }),
      expect.objectContaining({
        name: 'sentry.span.duration',
        ts: NOW - 120,
        value: 80,
        version: 'shop@1.2.3',
        attributes: { transaction: 'GET /users/:id', span: 'SELECT 1', op: 'db', trace_id: 't1' },
      }),
    ]);
    // The span that ends before it starts has no duration to store.
    expect(m.unmapped).toEqual(['not_an_event']);
  });

  it('maps streamed spans: the segment is the transaction, the others spans; ids from trace and span ids', () => {
    const attr = (value: unknown) => ({ value, type: 'string' });
    const payload = {
      version: 2,
      items: [
        {
          name: 'checkout',
          span_id: 'a1',
          trace_id: 't1',
          start_timestamp: s(-300),
          end_timestamp: s(-100),
          is_segment: true,
          status: 'ok',
          attributes: {
            'sentry.op': attr('http.server'),
            'sentry.release': attr('1.0'),
            'sentry.environment': attr('prod'),
          },
        },
        {
          name: 'charge card',
          span_id: 'b1',
          trace_id: 't1',
          start_timestamp: s(-250),
          end_timestamp: s(-150),
          is_segment: false,
          status: 'error',
          attributes: { 'sentry.op': attr('http.client'), 'sentry.segment.name': attr('checkout') },
        },
        { name: 'no id', start_timestamp: s(-1), end_timestamp: s(0) },
        {
          name: 'too old',
          span_id: 'c1',
          trace_id: 't1',
          start_timestamp: s(-9e9),
          end_timestamp: s(-9e9 + 1),
        },
      ],
    };
    const m = mapSentrySpans(payload, ctx);
    for (const e of m.events) expectValidAsBuilt(e);
    expect(m.events.map((e) => [e.name, e.value, e.ts, e.version, e.env, e.attributes])).toEqual([
      [
        'sentry.transaction.duration',
        200,
        NOW - 100,
        '1.0',
        'prod',
        { transaction: 'checkout', op: 'http.server', status: 'ok', trace_id: 't1' },
      ],
      [
        'sentry.span.duration',
        100,
        NOW - 150,
        null,
        null,
        { transaction: 'checkout', span: 'charge card', op: 'http.client', status: 'error', trace_id: 't1' },
      ],
    ]);
    expect(m.unmapped).toEqual(['not_an_event', 'ts_out_of_range']);
    // A resend is the same samples; another app's span of the same ids is not.
    expect(mapSentrySpans(payload, ctx).events.map((e) => e.id)).toEqual(m.events.map((e) => e.id));
    expect(mapSentrySpans(payload, { ...ctx, app: 'other' }).events[0]?.id).not.toBe(m.events[0]?.id);
  });

  it('maps a standalone span object, and counts what is no span', () => {
    const m = mapSentrySpans(
      {
        span_id: 'a1',
        trace_id: 't1',
        op: 'ui.load',
        description: 'home',
        start_timestamp: s(-40),
        timestamp: s(-10),
        data: { 'sentry.segment.name': '/home', 'sentry.release': '2.0' },
      },
      ctx,
    );
    expect(m.events).toEqual([
      expect.objectContaining({
        name: 'sentry.span.duration',
        value: 30,
        version: '2.0',
        attributes: { transaction: '/home', span: 'home', op: 'ui.load', trace_id: 't1' },
      }),
    ]);
    expect(mapSentrySpans('nope', ctx).unmapped).toEqual(['not_an_event']);
    expect(mapSentryTransaction({ transaction: 'x', timestamp: s(0) }, ctx).unmapped).toEqual([
      'not_an_event',
    ]);
  });
});
