import { randomBytes } from 'node:crypto';
import protobuf from 'protobufjs';
import { otlpTypes } from '../../src/otlp/proto/otlp-types';
import { waitFor } from '../support/http';
import type { InProcessCollector } from '../support/in-process';
import { tempSqlitePath } from '../support/postgres';
import {
  errorSpan,
  gaugeRequest,
  logRecord,
  logsRequest,
  nowNanos,
  postOtlp,
  tracesRequest,
  type Signal,
} from './otlp-requests';
import { bySeq, startWithOtlp, storedEvents, uniqueApp, type Encoding } from './otlp-support';

const INVALID_ARGUMENT = 3;
const MAX_BODY = 64 * 1024;

/** Every status of the OTLP/HTTP contract, in both encodings, on raw requests. */
describe('OTLP/HTTP contract', () => {
  let c: InProcessCollector;
  let otlpUrl: string;

  beforeAll(async () => {
    ({ c, otlpUrl } = await startWithOtlp({
      SLUICE_SQLITE_PATH: tempSqlitePath('otlp-contract'),
      SLUICE_OTLP_MAX_BODY_BYTES: String(MAX_BODY),
    }));
  });

  afterAll(async () => {
    await c?.stop();
  });

  describe.each<Encoding>(['json', 'protobuf'])('%s', (encoding) => {
    const contentType = encoding === 'json' ? 'application/json' : 'application/x-protobuf';

    it('200 with an empty Export…ServiceResponse when every record is taken, in the request’s encoding', async () => {
      const app = uniqueApp('ok');
      const res = await postOtlp(otlpUrl, 'logs', logsRequest(app, [logRecord(1), logRecord(2)]), {
        encoding,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(contentType);
      expect(res.body).toEqual({});
      const events = await waitFor('2 events', async () => {
        const e = await storedEvents(c.url, app);
        return e.length >= 2 ? e : null;
      });
      expect([...bySeq(events).keys()].sort()).toEqual([1, 2]);
    });

    it('gzip bodies are taken', async () => {
      const app = uniqueApp('gzip');
      const res = await postOtlp(otlpUrl, 'logs', logsRequest(app, [logRecord(1)]), { encoding, gzip: true });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({});
      await waitFor('the gzipped record stored', async () => bySeq(await storedEvents(c.url, app)).has(1));
    });

    it.each<[Signal, string, (app: string) => unknown]>([
      [
        'logs',
        'rejectedLogRecords',
        (app) => logsRequest(app, [logRecord(1), logRecord(2, { timeUnixNano: '1000000000000000' })]),
      ],
      [
        'metrics',
        'rejectedDataPoints',
        (app) => gaugeRequest(app, [{ timeUnixNano: nowNanos(), asDouble: 4 }, { timeUnixNano: nowNanos() }]),
      ],
      ['traces', 'rejectedSpans', (app) => tracesRequest(app, [errorSpan(1), errorSpan(2, { spanId: '' })])],
    ])(
      '%s: invalid records → 200 with partial_success (%s and a message)',
      async (signal, field, request) => {
        const app = uniqueApp(`partial-${signal}`);
        const res = await postOtlp(otlpUrl, signal, request(app), { encoding });
        expect(res.status).toBe(200);
        expect(res.body.partialSuccess[field]).toBe('1');
        expect(res.body.partialSuccess.errorMessage).toMatch(/^1 of 2 .* rejected: \w+ ×1\.( \w+: .*\.)?$/);
        await waitFor('the valid record', async () => (await storedEvents(c.url, app)).length === 1);
      },
    );

    it('a time in seconds or milliseconds is refused with the hint to send nanoseconds', async () => {
      const app = uniqueApp('seconds');
      const nowMs = Date.now();
      const res = await postOtlp(
        otlpUrl,
        'logs',
        logsRequest(app, [
          logRecord(1, { timeUnixNano: String(Math.floor(nowMs / 1000)) }),
          logRecord(2, { timeUnixNano: String(nowMs) }),
        ]),
        { encoding },
      );
      expect(res.status).toBe(200);
      expect(res.body.partialSuccess.errorMessage).toBe(
        '2 of 2 log records rejected: ts_out_of_range ×2. ts_out_of_range: record times (timeUnixNano, ' +
          "observedTimeUnixNano; a span's endTimeUnixNano) are nanoseconds since the Unix epoch, within " +
          "7 days back and 5 minutes ahead of the collector's clock (seconds are 10^9 times too small, " +
          'milliseconds 10^6).',
      );
    });

    it('the same export sent three times is stored once', async () => {
      const app = uniqueApp('thrice');
      const request = logsRequest(app, [logRecord(1), logRecord(2), logRecord(3, { severityNumber: 17 })]);
      for (let i = 0; i < 3; i++) {
        expect((await postOtlp(otlpUrl, 'logs', request, { encoding })).status).toBe(200);
      }
      // The same records in the other encoding have the same ids too.
      const other = encoding === 'json' ? 'protobuf' : 'json';
      expect((await postOtlp(otlpUrl, 'logs', request, { encoding: other })).status).toBe(200);
      const spans = tracesRequest(app, [errorSpan(10)]);
      for (let i = 0; i < 3; i++)
        expect((await postOtlp(otlpUrl, 'traces', spans, { encoding })).status).toBe(200);
      // A marker export sent last: once it is stored, everything before it is too (one writer, in order).
      await postOtlp(otlpUrl, 'logs', logsRequest(app, [logRecord(99)]), { encoding });
      const events = await waitFor('the marker', async () => {
        const e = await storedEvents(c.url, app);
        return bySeq(e).has(99) ? e : null;
      });
      const seqs = bySeq(events);
      for (const seq of [1, 2, 3, 10]) expect(seqs.get(seq)).toHaveLength(1);
      expect(events).toHaveLength(5);
    });

    it('400 with a google.rpc.Status for a body that is not an export request', async () => {
      const bad =
        encoding === 'json'
          ? ['{"resourceLogs": [', '[1,2]', '"text"']
          : [Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01])];
      for (const raw of bad) {
        const res = await postOtlp(otlpUrl, 'logs', null, { encoding, raw });
        expect(res.status).toBe(400);
        expect(res.headers.get('content-type')).toBe(contentType);
        expect(res.body).toEqual({ code: INVALID_ARGUMENT, message: expect.any(String) });
      }
      const gzipHeader = await postOtlp(otlpUrl, 'logs', null, {
        encoding,
        raw: 'not gzip',
        headers: { 'content-encoding': 'gzip' },
      });
      expect(gzipHeader).toMatchObject({ status: 400, body: { code: INVALID_ARGUMENT } });
    });

    it('400 for nesting beyond the limit', async () => {
      let value: any = { stringValue: 'leaf' };
      for (let i = 0; i < 150; i++) value = { kvlistValue: { values: [{ key: 'k', value }] } };
      const request = logsRequest('deep', [{ ...logRecord(1), attributes: [{ key: 'deep', value }] }]);
      const raw = encoding === 'json' ? JSON.stringify(request) : deepProtobuf(150);
      const res = await postOtlp(otlpUrl, 'logs', null, { encoding, raw });
      expect(res).toMatchObject({ status: 400, body: { code: INVALID_ARGUMENT } });
    });

    it('413 for a body over SLUICE_OTLP_MAX_BODY_BYTES, after decompression (a gzip bomb stops at the limit)', async () => {
      const big = logsRequest('big', [logRecord(1, { body: { stringValue: 'x'.repeat(MAX_BODY) } })]);
      expect((await postOtlp(otlpUrl, 'logs', big, { encoding })).status).toBe(413);
      const bomb = await postOtlp(otlpUrl, 'logs', big, { encoding, gzip: true });
      expect(bomb.status).toBe(413);
      expect(bomb.body.message).toMatch(/larger than 65536 bytes/);
    });
  });

  it('415 for another Content-Type or Content-Encoding; 404 for other routes, 405 for another method on a route', async () => {
    const text = await fetch(`${otlpUrl}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({
      code: INVALID_ARGUMENT,
      message: expect.stringMatching(/x-protobuf/),
    });
    const br = await postOtlp(otlpUrl, 'logs', {}, { headers: { 'content-encoding': 'br' } });
    expect(br.status).toBe(415);
    for (const [method, path, status] of [
      ['POST', '/v1/events', 404],
      ['GET', '/v1/logs', 405],
      ['POST', '/v1/logs/', 404],
      ['POST', '/V1/LOGS', 404],
    ] as const) {
      const res = await fetch(`${otlpUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(method === 'POST' && { body: '{}' }),
      });
      expect([path, res.status]).toEqual([path, status]);
    }
  });

  it('an empty export is answered 200', async () => {
    for (const signal of ['logs', 'metrics', 'traces'] as const) {
      const empty = await postOtlp(otlpUrl, signal, {});
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({});
      expect(
        await postOtlp(otlpUrl, signal, {}, { encoding: 'protobuf', raw: Buffer.alloc(0) }),
      ).toMatchObject({ status: 200 });
    }
  });

  it('hostile bodies in either encoding never reach a 500', async () => {
    const statuses = new Set<number>();
    const signals = ['logs', 'metrics', 'traces'] as const;
    // Random bytes, and valid requests with bytes flipped: protobuf that decodes into odd shapes.
    const valid = [
      Buffer.from(
        otlpTypes()
          .logsRequest.encode(
            otlpTypes().logsRequest.fromObject(logsRequest('fuzz', [logRecord(1)]) as object),
          )
          .finish(),
      ),
    ];
    for (let i = 0; i < 150; i++) {
      const signal = signals[i % 3] as Signal;
      let raw: Buffer;
      if (i % 2 === 0) raw = randomBytes(1 + (i % 300));
      else {
        raw = Buffer.from(valid[0] as Buffer);
        for (let k = 0; k < 3; k++) raw[(i * 7 + k * 13) % raw.length] = (i * 31 + k) & 0xff;
      }
      statuses.add((await postOtlp(otlpUrl, signal, null, { encoding: 'protobuf', raw })).status);
    }
    // JSON of every OTLP field with values of every wrong type.
    const wrong = [null, 1, -1, 1.5, 'x', '99999999999999999999999', true, [], {}, [null], { a: 1 }];
    const shapes = (v: unknown) => [
      { resourceLogs: v },
      { resourceLogs: [{ resource: v, scopeLogs: v }] },
      { resourceLogs: [{ scopeLogs: [{ scope: v, logRecords: v }] }] },
      {
        resourceLogs: [
          {
            scopeLogs: [
              {
                logRecords: [
                  v,
                  { timeUnixNano: v, severityNumber: v, body: v, attributes: v, traceId: v, eventName: v },
                ],
              },
            ],
          },
        ],
      },
      {
        resourceLogs: [
          {
            scopeLogs: [
              {
                logRecords: [
                  {
                    attributes: [
                      v,
                      { key: v, value: v },
                      {
                        key: 'k',
                        value: { kvlistValue: v, arrayValue: v, intValue: v, doubleValue: v, bytesValue: v },
                      },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
      {
        resourceMetrics: [
          {
            scopeMetrics: [
              {
                metrics: [
                  v,
                  { name: v, gauge: v, sum: v },
                  {
                    name: 'm',
                    sum: {
                      aggregationTemporality: v,
                      isMonotonic: v,
                      dataPoints: [v, { asInt: v, asDouble: v, timeUnixNano: v }],
                    },
                  },
                ],
              },
            ],
          },
        ],
      },
      {
        resourceMetrics: [
          {
            scopeMetrics: [
              {
                metrics: [
                  {
                    name: 'h',
                    histogram: {
                      aggregationTemporality: 1,
                      dataPoints: [
                        { count: v, sum: v, min: v, max: v, bucketCounts: v, explicitBounds: v },
                        { count: '3', bucketCounts: [v, v], explicitBounds: [v] },
                      ],
                    },
                  },
                  {
                    name: 's',
                    summary: {
                      dataPoints: [{ count: v, sum: v, quantileValues: [v, { quantile: v, value: v }] }],
                    },
                  },
                  {
                    name: 'e',
                    exponentialHistogram: { aggregationTemporality: 2, dataPoints: [{ count: v, min: v }] },
                  },
                ],
              },
            ],
          },
        ],
      },
      {
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  v,
                  { traceId: v, spanId: v, name: v, status: v, events: v },
                  {
                    traceId: '0af7651916cd43dd8448eb211c80319c',
                    spanId: 'b7ad6b7169203331',
                    status: { code: 2, message: v },
                    events: [v, { name: 'exception', attributes: v, timeUnixNano: v }],
                  },
                ],
              },
            ],
          },
        ],
      },
    ];
    for (const v of wrong) {
      for (const body of shapes(v)) {
        const signal: Signal =
          'resourceLogs' in body ? 'logs' : 'resourceMetrics' in body ? 'metrics' : 'traces';
        const res = await postOtlp(otlpUrl, signal, body);
        statuses.add(res.status);
        if (res.status >= 500) throw new Error(`${res.status} for ${JSON.stringify(body)}`);
      }
    }
    expect([...statuses].filter((s) => s >= 500)).toEqual([]);
    expect(statuses.has(200)).toBe(true);
    expect(statuses.has(400)).toBe(true);
    // The collector is still well.
    expect((await postOtlp(otlpUrl, 'logs', logsRequest(uniqueApp('after'), [logRecord(1)]))).status).toBe(
      200,
    );
  });

  it('text over the string limit is cut, never between the halves of a surrogate pair', async () => {
    const app = uniqueApp('cut');
    // With the default limit (1024) the cut keeps 1012 code units before the marker: the emoji
    // sits on that line, its high half inside, its low half outside.
    const body = `${'x'.repeat(1011)}😀${'y'.repeat(100)}`;
    const res = await postOtlp(
      otlpUrl,
      'logs',
      logsRequest(app, [logRecord(1, { body: { stringValue: body } })]),
    );
    expect([res.status, res.body]).toEqual([200, {}]);
    const [event] = await waitFor('the record', async () => {
      const e = await storedEvents(c.url, app);
      return e.length > 0 ? e : null;
    });
    expect(event.message).toBe(`${'x'.repeat(1011)}…[truncated]`);
  });

  it('gzip of a protobuf body is taken', async () => {
    const app = uniqueApp('gzip-pb');
    const res = await postOtlp(otlpUrl, 'logs', logsRequest(app, [logRecord(7)]), {
      encoding: 'protobuf',
      gzip: true,
    });
    expect(res.status).toBe(200);
    await waitFor('the record', async () => bySeq(await storedEvents(c.url, app)).has(7));
  });
});

/** A length-delimited field. */
function field(n: number, bytes: Uint8Array): Uint8Array {
  return protobuf.Writer.create()
    .uint32((n << 3) | 2)
    .bytes(bytes)
    .finish();
}

/**
 * An ExportLogsServiceRequest whose one attribute nests `levels` key-value lists, written by hand
 * (protobufjs's encoder refuses what its decoder would): AnyValue.kvlist_value (6) →
 * KeyValueList.values (1) → KeyValue.value (2) → AnyValue …
 */
function deepProtobuf(levels: number): Buffer {
  let value: Uint8Array = field(1, Buffer.from('leaf'));
  for (let i = 0; i < levels; i++) {
    const kv = Buffer.concat([field(1, Buffer.from('k')), field(2, value)]);
    value = field(6, field(1, kv));
  }
  const attribute = Buffer.concat([field(1, Buffer.from('deep')), field(2, value)]);
  const logRecord = field(6, attribute);
  return Buffer.from(field(1, field(2, field(2, logRecord))));
}
