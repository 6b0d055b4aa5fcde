import { Registry } from 'prom-client';
import type { IntakeAnswer } from '../../../src/intake/intake-answer';
import { createOtlpMetrics } from '../../../src/metrics/otlp-instruments';
import { OtlpExportService } from '../../../src/otlp/export-service';
import { SIGNALS } from '../../../src/otlp/signals';
import { kv, LIMITS, nanos, NOW, RESOURCE } from './fixtures';

const logsSpec = SIGNALS.find((s) => s.signal === 'logs')!;

function request(count: number, extra: Record<string, unknown> = {}) {
  const logRecords = Array.from({ length: count }, (_, i) => ({
    timeUnixNano: nanos(NOW),
    body: { stringValue: `line ${i}` },
    attributes: [kv('i', { intValue: i })],
    ...extra,
  }));
  return { resourceLogs: [{ resource: RESOURCE, scopeLogs: [{ logRecords }] }] };
}

/** An export service over an intake that answers from `answers` in turn and records its calls. */
function service(answers: IntakeAnswer[], maxEventsPerCall = 1000) {
  const calls: Array<{ events: readonly unknown[]; options: unknown }> = [];
  const registry = new Registry();
  const s = new OtlpExportService({
    ingest: {
      ingestValidated: async (events, _principal, options) => {
        calls.push({ events, options });
        return answers.shift() ?? { kind: 'admitted', accepted: events.length, rejected: [], advice: [] };
      },
    },
    limits: LIMITS,
    maxEventsPerCall,
    retryAfterMaxSeconds: 2,
    clock: { now: () => NOW },
    metrics: createOtlpMetrics(registry),
  });
  return { s, calls, registry };
}

describe('OTLP export service', () => {
  it('asks the intake to take or refuse each request whole', async () => {
    const { s, calls } = service([]);
    expect(await s.export(logsSpec, request(3), null)).toEqual({
      kind: 'admitted',
      rejected: 0,
      message: '',
    });
    expect(calls).toEqual([{ events: expect.any(Array), options: { whole: true } }]);
    expect(calls[0]?.events).toHaveLength(3);
  });

  it('hands an export larger than the per-request event limit over in parts', async () => {
    const { s, calls } = service([], 4);
    await s.export(logsSpec, request(10), null);
    expect(calls.map((c) => c.events.length)).toEqual([4, 4, 2]);
  });

  it('a throttled part refuses the whole export with 429 and a Retry-After within the exporters’ budget', async () => {
    const { s, calls } = service(
      [
        { kind: 'admitted', accepted: 4, rejected: [], advice: [] },
        {
          kind: 'throttled',
          accepted: 0,
          rejected: [],
          throttled: [0, 1],
          reason: 'queue_full',
          limitedOnly: false,
          retryAfterSeconds: 30,
          advice: [],
        },
      ],
      4,
    );
    expect(await s.export(logsSpec, request(10), null)).toEqual({
      kind: 'refused',
      status: 429,
      reason: 'queue_full',
      retryAfterSeconds: 2,
    });
    expect(calls).toHaveLength(2);
  });

  it('an unavailable intake is a 503', async () => {
    const { s } = service([{ kind: 'unavailable', retryAfterSeconds: 5 }]);
    expect(await s.export(logsSpec, request(1), null)).toMatchObject({
      kind: 'refused',
      status: 503,
      retryAfterSeconds: 2,
    });
  });

  it('records the intake rejects and records that cannot be mapped add up in partial_success', async () => {
    const { s, registry } = service([
      {
        kind: 'admitted',
        accepted: 1,
        rejected: [{ index: 0, reason: 'ts_out_of_range', field: 'ts' }],
        advice: [],
      },
    ]);
    const req = request(2);
    (req.resourceLogs[0]!.scopeLogs[0]!.logRecords as unknown[]).push('not a record');
    expect(await s.export(logsSpec, req, null)).toEqual({
      kind: 'admitted',
      rejected: 2,
      message: expect.stringMatching(
        /^2 of 3 log records rejected: not_a_record ×1, ts_out_of_range ×1\. ts_out_of_range: .* nanoseconds .*\.$/,
      ),
    });
    const text = await registry.metrics();
    expect(text).toMatch(/sluice_otlp_rejected_records_total\{signal="logs",reason="ts_out_of_range"\} 1/);
    expect(text).toMatch(/sluice_otlp_records_total\{signal="logs",outcome="event"\} 2/);
  });

  it('apps over their limit in a relay’s export are refused by name in partial_success; the rest is taken', async () => {
    const { s, registry } = service([
      {
        kind: 'throttled',
        accepted: 1,
        rejected: [],
        throttled: [1, 2],
        reason: 'rate_limited',
        limitedOnly: true,
        retryAfterSeconds: 7,
        advice: [],
      },
    ]);
    const req = request(3);
    const noisy = { attributes: [kv('service.name', { stringValue: 'noisy' })] };
    req.resourceLogs.push({
      resource: noisy as never,
      scopeLogs: [{ logRecords: req.resourceLogs[0]!.scopeLogs[0]!.logRecords.splice(1) }],
    });
    expect(await s.export(logsSpec, req, null)).toEqual({
      kind: 'admitted',
      rejected: 2,
      message:
        '2 of 3 log records rejected: rate_limited ×2. Over their rate limit (resend their records after 2 s): noisy.',
    });
    expect(await registry.metrics()).toMatch(
      /sluice_otlp_rejected_records_total\{signal="logs",reason="rate_limited"\} 2/,
    );
  });

  it('a throttled part that is over the limit for every app refuses the whole export', async () => {
    const { s } = service([
      {
        kind: 'throttled',
        accepted: 0,
        rejected: [],
        throttled: [0],
        reason: 'rate_limited',
        limitedOnly: false,
        retryAfterSeconds: 1,
        advice: [],
      },
    ]);
    expect(await s.export(logsSpec, request(1), null)).toMatchObject({ kind: 'refused', status: 429 });
  });
});
