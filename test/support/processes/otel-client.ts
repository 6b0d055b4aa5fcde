/**
 * An app instrumented with the real OpenTelemetry JS SDK, exporting to a Sluice OTLP receiver
 * (compiled by `npm run build` to dist/test/support/processes/otel-client.js). It runs in its own
 * process because the SDK's exporters load `http` with a dynamic `import()`, which jest's module
 * sandbox refuses. One scenario per run, given as JSON in argv[2]:
 *
 *   {"scenario": "logs" | "log-batch" | "metrics" | "traces", "url": "http://127.0.0.1:4318",
 *    "app": "service.name", "encoding": "json" | "protobuf", "headers": {…},
 *    "count": n (log-batch), "temporality": "delta" | "cumulative" (metrics)}
 *
 * It flushes (exports, with the exporter's own retries) and prints one line:
 * `{"event":"done","exports":[{"code":0}, …], …}` (code 0: success; 1: failed, with `error`).
 */
import { SpanStatusCode } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import {
  AggregationTemporalityPreference,
  OTLPMetricExporter as JsonMetricExporter,
} from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

interface Scenario {
  readonly scenario: 'logs' | 'log-batch' | 'metrics' | 'traces';
  readonly url: string;
  readonly app: string;
  readonly encoding: 'json' | 'protobuf';
  readonly headers?: Record<string, string>;
  readonly count?: number;
  readonly temporality?: 'delta' | 'cumulative';
}

interface ExportResultLike {
  code: number;
  error?: Error;
}

const results: Array<{ code: number; error?: string }> = [];

/** Records the result of every export the SDK makes through `exporter`. */
function recording<T extends { export(items: never, done: (r: ExportResultLike) => void): void }>(
  exporter: T,
): T {
  const original = exporter.export.bind(exporter) as (
    items: unknown,
    done: (r: ExportResultLike) => void,
  ) => void;
  (exporter as { export: unknown }).export = (items: unknown, done: (r: ExportResultLike) => void) =>
    original(items, (r) => {
      results.push(r.error ? { code: r.code, error: r.error.message } : { code: r.code });
      done(r);
    });
  return exporter;
}

function resource(app: string) {
  return resourceFromAttributes({
    'service.name': app,
    'service.version': '2.0.1',
    'deployment.environment.name': 'test',
  });
}

async function logs(s: Scenario): Promise<Record<string, unknown>> {
  const options = { url: `${s.url}/v1/logs`, headers: s.headers ?? {} };
  const exporter = recording(
    s.encoding === 'json' ? new JsonLogExporter(options) : new ProtoLogExporter(options),
  );
  const provider = new LoggerProvider({
    resource: resource(s.app),
    // One export per flush: a long delay and a batch larger than any scenario's.
    processors: [
      new BatchLogRecordProcessor({
        exporter,
        scheduledDelayMillis: 600_000,
        maxExportBatchSize: 2048,
        maxQueueSize: 4096,
      }),
    ],
  });
  const logger = provider.getLogger('checkout-service');
  if (s.scenario === 'log-batch') {
    for (let seq = 0; seq < (s.count ?? 10); seq++) {
      logger.emit({ severityNumber: SeverityNumber.INFO, body: `line ${seq}`, attributes: { seq } });
    }
  } else {
    for (let seq = 0; seq < 20; seq++) {
      logger.emit({
        severityNumber: SeverityNumber.INFO,
        severityText: 'INFO',
        body: `cart updated ${seq}`,
        attributes: { seq, 'cart.items': seq % 4, tags: ['a', 'b'] },
      });
    }
    logger.emit({ severityNumber: SeverityNumber.ERROR, body: 'payment failed', attributes: { seq: 100 } });
    logger.emit({
      severityNumber: SeverityNumber.WARN,
      body: 'retrying',
      attributes: {
        seq: 101,
        'exception.type': 'TimeoutError',
        'exception.message': 'upstream timed out',
        'exception.stacktrace': 'TimeoutError: upstream timed out\n    at pay (pay.js:1:1)',
      },
    });
  }
  await provider.forceFlush();
  await provider.shutdown();
  return {};
}

async function metrics(s: Scenario): Promise<Record<string, unknown>> {
  const options = {
    url: `${s.url}/v1/metrics`,
    headers: s.headers ?? {},
    temporalityPreference:
      s.temporality === 'cumulative'
        ? AggregationTemporalityPreference.CUMULATIVE
        : AggregationTemporalityPreference.DELTA,
  };
  const exporter = recording(
    s.encoding === 'json' ? new JsonMetricExporter(options) : new ProtoMetricExporter(options),
  );
  const provider = new MeterProvider({
    resource: resource(s.app),
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })],
  });
  const meter = provider.getMeter('checkout-service');
  const orders = meter.createCounter('orders.placed');
  const latency = meter.createHistogram('http.server.duration', { unit: 'ms' });
  orders.add(3, { region: 'eu' });
  orders.add(4, { region: 'eu' });
  for (const v of [12, 7, 30, 1]) latency.record(v, { route: '/checkout' });
  await provider.forceFlush();
  orders.add(5, { region: 'eu' });
  latency.record(100, { route: '/checkout' });
  await provider.forceFlush();
  // No shutdown: it would export the cumulative state a third time.
  return {};
}

async function traces(s: Scenario): Promise<Record<string, unknown>> {
  const options = { url: `${s.url}/v1/traces`, headers: s.headers ?? {} };
  const exporter = recording(
    s.encoding === 'json' ? new JsonTraceExporter(options) : new ProtoTraceExporter(options),
  );
  const provider = new BasicTracerProvider({
    resource: resource(s.app),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 600_000 })],
  });
  const tracer = provider.getTracer('checkout-service');
  for (let i = 0; i < 3; i++) tracer.startSpan('GET /users/:id').end();
  const failed = tracer.startSpan('POST /checkout');
  failed.recordException(Object.assign(new Error('card declined'), { name: 'PaymentError' }));
  failed.setStatus({ code: SpanStatusCode.ERROR, message: 'payment failed' });
  failed.setAttribute('http.route', '/checkout');
  failed.end();
  const statusOnly = tracer.startSpan('GET /cart');
  statusOnly.setStatus({ code: SpanStatusCode.ERROR, message: 'cart unavailable' });
  statusOnly.end();
  await provider.forceFlush();
  await provider.shutdown();
  return { failed: failed.spanContext(), statusOnly: statusOnly.spanContext() };
}

async function main(): Promise<void> {
  const s = JSON.parse(process.argv[2] ?? '{}') as Scenario;
  const run = { logs, 'log-batch': logs, metrics, traces }[s.scenario];
  const extra = await run(s);
  process.stdout.write(`${JSON.stringify({ event: 'done', exports: results, ...extra })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String((err as Error).stack ?? err)}\n`);
  process.exit(1);
});
