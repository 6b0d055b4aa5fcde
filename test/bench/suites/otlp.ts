import { freePort } from '../../../src/dev-cluster/free-port';
import { otlpTypes } from '../../../src/otlp/proto/otlp-types';
import { startCollector } from '../collector-process';
import type { BenchContext } from '../context';
import { runFormat, type FormatRun } from '../format-run';
import { figure, round, versus } from '../rows';
import type { BenchRow } from '../types';
import { uuidV7 } from '../uuid-v7';
import { seededRandom, type RequestBody } from '../workload';

const SUITE = 'otlp';
const CONCURRENCY = 4;
const RECORDS_PER_BODY = 100;
const WARMUP_BODIES = 100;

type Format = 'events' | 'otlp-json' | 'otlp-protobuf';

const FORMATS: Readonly<Record<Format, { path: string; contentType: string; label: string }>> = {
  events: { path: '/v1/events', contentType: 'application/json', label: 'logs via POST /v1/events' },
  'otlp-json': { path: '/v1/logs', contentType: 'application/json', label: 'OTLP JSON logs' },
  'otlp-protobuf': { path: '/v1/logs', contentType: 'application/x-protobuf', label: 'OTLP protobuf logs' },
};

const APPS = ['web-shop', 'checkout-api', 'ios-app', 'billing'];
const ROUTES = ['/checkout', '/cart', '/product/:id', '/search'];

interface LogLine {
  readonly seq: number;
  readonly ts: number;
  readonly message: string;
  readonly route: string;
}

/** The same log records as bodies of each format: what an OTel exporter and the Sluice SDK would send. */
function buildBodies(count: number, seed: number): Record<Format, RequestBody[]> {
  const r = seededRandom(seed);
  const out: Record<Format, RequestBody[]> = { events: [], 'otlp-json': [], 'otlp-protobuf': [] };
  const type = otlpTypes().logsRequest;
  const now = Date.now();
  let seq = seed * 10_000_000;
  for (let b = 0; b < count; b++) {
    const app = APPS[b % APPS.length] as string;
    const source = { app, version: '1.4.2', env: 'prod' };
    const lines: LogLine[] = Array.from({ length: RECORDS_PER_BODY }, () => ({
      seq: seq++,
      ts: now - Math.floor(r() * 1000),
      message: `user ${Math.floor(r() * 1e6)} completed step ${Math.floor(r() * 9)} in ${Math.floor(r() * 900)} ms`,
      route: ROUTES[Math.floor(r() * ROUTES.length)] as string,
    }));
    const events = lines.map((l) => ({
      id: uuidV7(l.ts),
      type: 'log',
      name: 'app.flow',
      ts: l.ts,
      source,
      message: l.message,
      attributes: { 'log.severity': 'INFO', route: l.route, seq: l.seq },
    }));
    const request = {
      resourceLogs: [
        {
          resource: {
            attributes: [
              { key: 'service.name', value: { stringValue: app } },
              { key: 'service.version', value: { stringValue: source.version } },
              { key: 'deployment.environment.name', value: { stringValue: source.env } },
            ],
          },
          scopeLogs: [
            {
              scope: { name: 'app.flow' },
              logRecords: lines.map((l) => ({
                timeUnixNano: `${l.ts}000000`,
                severityNumber: 9,
                severityText: 'INFO',
                body: { stringValue: l.message },
                attributes: [
                  { key: 'route', value: { stringValue: l.route } },
                  { key: 'seq', value: { intValue: String(l.seq) } },
                ],
              })),
            },
          ],
        },
      ],
    };
    out.events.push({ bytes: Buffer.from(JSON.stringify({ events })), events: RECORDS_PER_BODY });
    out['otlp-json'].push({ bytes: Buffer.from(JSON.stringify(request)), events: RECORDS_PER_BODY });
    out['otlp-protobuf'].push({
      bytes: Buffer.from(type.encode(type.fromObject(request)).finish()),
      events: RECORDS_PER_BODY,
    });
  }
  return out;
}

async function runOtlpFormat(
  ctx: BenchContext,
  format: Format,
  bodies: readonly RequestBody[],
  warmup: readonly RequestBody[],
  label: string,
): Promise<FormatRun> {
  const db = await ctx.databases.fresh(label);
  const otlpPort = await freePort();
  const collector = await startCollector({
    databaseUrl: db.url,
    ack: 'queued',
    extraEnv: { SLUICE_OTLP_PORT: String(otlpPort) },
  });
  const f = FORMATS[format];
  try {
    const target = {
      collector,
      databaseUrl: db.url,
      origin: format === 'events' ? collector.origin : `http://127.0.0.1:${otlpPort}`,
      path: f.path,
      contentType: f.contentType,
      countsFromBodies: format !== 'events',
    };
    return await runFormat(ctx, target, CONCURRENCY, bodies, warmup);
  } finally {
    await collector.stop();
    await ctx.databases.drop(db);
  }
}

/**
 * OTLP logs (JSON and protobuf) against `POST /v1/events` carrying the same records (100 per
 * request, PostgreSQL, acknowledged when queued), two rounds alternating the three formats on
 * the same box; the better round of each counts. Figures: events/s stored, collector CPU per
 * stored event, body bytes per event. No target: the row says what the OTLP front costs.
 */
export async function runOtlpBench(ctx: BenchContext): Promise<BenchRow[]> {
  const bodyCount = ctx.options.quick ? 300 : 1200;
  ctx.progress(`otlp: building ${bodyCount * RECORDS_PER_BODY} records in three formats`);
  const bodies = buildBodies(bodyCount, 1);
  const warmup = buildBodies(WARMUP_BODIES, 2);
  const runs: Record<Format, FormatRun[]> = { events: [], 'otlp-json': [], 'otlp-protobuf': [] };
  for (let round = 0; round < 2; round++) {
    for (const format of Object.keys(FORMATS) as Format[]) {
      ctx.progress(`otlp: ${format}, round ${round + 1}`);
      runs[format].push(
        await runOtlpFormat(ctx, format, bodies[format], warmup[format], `otlp_${format}_${round}`),
      );
    }
  }
  const best = (rs: FormatRun[]) => rs.reduce((a, b) => (b.storedPerSecond > a.storedPerSecond ? b : a));
  const extra = (format: Format) => {
    const b = best(runs[format]);
    return {
      runs_events_s: runs[format].map((r) => Math.round(r.storedPerSecond)).join('/'),
      cpu_us_per_event: round(b.cpuMicrosPerEvent),
      body_bytes_per_event: Math.round(b.bytesPerEvent),
      p99_ms: round(b.p99Ms),
    };
  };
  const baseline = figure(
    SUITE,
    FORMATS.events.label,
    best(runs.events).storedPerSecond,
    'events/s stored',
    extra('events'),
  );
  return [
    baseline,
    versus(
      SUITE,
      FORMATS['otlp-json'].label,
      best(runs['otlp-json']).storedPerSecond,
      'events/s stored',
      baseline,
      undefined,
      extra('otlp-json'),
    ),
    versus(
      SUITE,
      FORMATS['otlp-protobuf'].label,
      best(runs['otlp-protobuf']).storedPerSecond,
      'events/s stored',
      baseline,
      undefined,
      extra('otlp-protobuf'),
    ),
  ];
}
