import { mapLogs } from '../../../src/otlp/map-logs';
import { mapTraces } from '../../../src/otlp/map-traces';
import { otlpTypes } from '../../../src/otlp/proto/otlp-types';
import { ctx, expectValidAsBuilt, kv, nanos, NOW, RESOURCE } from './fixtures';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';

function logs(records: unknown[], resource: unknown = RESOURCE) {
  return {
    resourceLogs: [
      { resource, scopeLogs: [{ scope: { name: 'checkout', version: '1' }, logRecords: records }] },
    ],
  };
}

/** The same request through protobuf: encoded, then decoded as the receiver does. */
function viaProtobuf(json: unknown, type: 'logsRequest' | 'tracesRequest'): unknown {
  const t = otlpTypes()[type];
  const withBytes = JSON.parse(JSON.stringify(json), (key, value) =>
    (key === 'traceId' || key === 'spanId') && typeof value === 'string' ? Buffer.from(value, 'hex') : value,
  );
  return t.decode(t.encode(t.fromObject(withBytes)).finish());
}

describe('logs mapping', () => {
  const record = {
    timeUnixNano: nanos(NOW),
    observedTimeUnixNano: nanos(NOW + 5),
    severityNumber: 9,
    body: { stringValue: 'cart updated' },
    attributes: [kv('items', { intValue: '3' })],
    traceId: TRACE,
    spanId: SPAN,
  };

  it('a record → a log event; JSON and protobuf give the same event and the same id', () => {
    const json = mapLogs(logs([record]), ctx());
    const pb = mapLogs(viaProtobuf(logs([record]), 'logsRequest'), ctx());
    expect(json.events).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
        type: 'log',
        name: 'checkout',
        ts: NOW,
        app: 'web-shop',
        version: '1.4.2',
        env: 'prod',
        value: null,
        summary: null,
        error: null,
        message: 'cart updated',
        attributes: expect.objectContaining({
          items: 3,
          'log.severity': 'INFO',
          trace_id: TRACE,
          span_id: SPAN,
        }),
      },
    ]);
    expect(pb.events).toEqual(json.events);
  });

  it('severity ≥ ERROR or exception.* attributes → an error event; exception.* are not repeated as attributes', () => {
    const out = mapLogs(
      logs([
        { ...record, severityNumber: 17, body: { kvlistValue: { values: [kv('code', { intValue: 5 })] } } },
        {
          ...record,
          severityNumber: 13,
          eventName: 'payment.retry',
          attributes: [
            kv('exception.type', { stringValue: 'TimeoutError' }),
            kv('exception.message', { stringValue: 'timed out' }),
            kv('exception.stacktrace', { stringValue: 'at x\u0000' }),
            kv('attempt', { intValue: 2 }),
          ],
        },
      ]),
      ctx(),
    );
    expect(out.events[0]).toMatchObject({ type: 'error', error: { message: '{"code":5}' } });
    expect(out.events[1]).toMatchObject({
      type: 'error',
      name: 'payment.retry',
      message: 'cart updated',
      error: { message: 'timed out', kind: 'TimeoutError', stack: 'at x\uFFFD' },
    });
    expect(Object.keys(out.events[1]?.attributes as object).sort()).toEqual(
      ['attempt', 'log.severity', 'span_id', 'trace_id'].sort(),
    );
    out.events.forEach(expectValidAsBuilt);
  });

  it('no time → observed time → now; no service.name → the key’s app, else unknown_service', () => {
    const noTime = { ...record, timeUnixNano: '0' };
    const ancient = mapLogs(logs([{ ...record, timeUnixNano: '1000000000000000' }]), ctx());
    expect([ancient.events, ancient.unmapped]).toEqual([[], new Map([['ts_out_of_range', 1]])]);
    expect(mapLogs(logs([noTime]), ctx()).events[0]?.ts).toBe(NOW + 5);
    expect(mapLogs(logs([{ body: { stringValue: 'x' } }]), ctx()).events[0]?.ts).toBe(NOW);
    expect(mapLogs(logs([record], {}), ctx({ keyApp: 'shop' })).events[0]).toMatchObject({
      app: 'shop',
      version: null,
      env: null,
    });
    expect(mapLogs(logs([record], {}), ctx()).events[0]?.app).toBe('unknown_service');
  });

  it('hostile values stay within the intake’s limits', () => {
    const many = Array.from({ length: 100 }, (_, i) => kv(`k${i}`, { stringValue: 'v'.repeat(5000) }));
    const out = mapLogs(
      logs(
        [
          {
            ...record,
            eventName: 'x'.repeat(500),
            body: { stringValue: 'b'.repeat(5000) },
            attributes: many,
          },
        ],
        { attributes: [kv('service.name', { stringValue: 's'.repeat(500) })] },
      ),
      ctx(),
    );
    expectValidAsBuilt(out.events[0]!);
    expect(out.droppedAttributes).toBe(100 - 32 + 3);
  });
});

describe('traces mapping', () => {
  const span = {
    traceId: TRACE,
    spanId: SPAN,
    name: 'POST /checkout',
    kind: 2,
    startTimeUnixNano: nanos(NOW - 40),
    endTimeUnixNano: nanos(NOW),
    attributes: [kv('http.route', { stringValue: '/checkout' })],
  };

  it('only failed spans become error events, with an id from trace and span id alone', () => {
    const out = mapTraces(
      {
        resourceSpans: [
          {
            resource: RESOURCE,
            scopeSpans: [
              {
                spans: [
                  span,
                  { ...span, spanId: '00f067aa0ba902b7', status: { code: 1 } },
                  {
                    ...span,
                    spanId: '1111111111111111',
                    events: [
                      {
                        name: 'exception',
                        timeUnixNano: nanos(NOW - 10),
                        attributes: [
                          kv('exception.type', { stringValue: 'PaymentError' }),
                          kv('exception.message', { stringValue: 'declined' }),
                        ],
                      },
                    ],
                  },
                  { ...span, spanId: '2222222222222222', status: { code: 2, message: 'boom' } },
                ],
              },
            ],
          },
        ],
      },
      ctx(),
    );
    expect(out.records).toBe(4);
    expect(out.skipped).toBe(2);
    expect(out.events).toEqual([
      expect.objectContaining({
        type: 'error',
        name: 'POST.checkout',
        ts: NOW - 10,
        error: { message: 'declined', kind: 'PaymentError', stack: null },
        attributes: expect.objectContaining({
          trace_id: TRACE,
          span_id: '1111111111111111',
          'otel.span_kind': 2,
          duration_ms: 40,
          'http.route': '/checkout',
        }),
      }),
      expect.objectContaining({ ts: NOW, error: { message: 'boom', kind: null, stack: null } }),
    ]);
    const other = mapTraces(
      {
        resourceSpans: [
          { scopeSpans: [{ spans: [{ spanId: '2222222222222222', traceId: TRACE, status: { code: 2 } }] }] },
        ],
      },
      ctx(),
    );
    expect(other.events[0]?.id).toBe(out.events[1]?.id);
    const pb = mapTraces(
      viaProtobuf(
        {
          resourceSpans: [
            {
              resource: RESOURCE,
              scopeSpans: [{ spans: [{ ...span, status: { code: 2, message: 'boom' } }] }],
            },
          ],
        },
        'tracesRequest',
      ),
      ctx(),
    );
    expect(pb.events[0]).toMatchObject({
      attributes: { trace_id: TRACE, span_id: SPAN },
      error: { message: 'boom' },
    });
  });
});
