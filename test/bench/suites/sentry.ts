import { startCollector } from '../collector-process';
import type { BenchContext } from '../context';
import { runFormat, type FormatRun } from '../format-run';
import { figure, round, versus } from '../rows';
import type { BenchRow } from '../types';
import { EventGenerator, type RequestBody, type WireEvent } from '../workload';

const SUITE = 'sentry';
const CONCURRENCY = 4;
const EVENTS_PER_BODY = 100;
const WARMUP_BODIES = 50;
/** The Sentry project of every envelope; `SLUICE_SENTRY_PROJECTS` names its app. */
const PROJECT = 1;
const APP = 'web-shop';

type Format = 'events' | 'sentry';

const FORMATS: Readonly<Record<Format, { path: string; contentType: string; label: string }>> = {
  events: { path: '/v1/events', contentType: 'application/json', label: 'errors via POST /v1/events' },
  sentry: {
    path: `/api/${PROJECT}/envelope/`,
    contentType: 'application/x-sentry-envelope',
    label: 'errors via Sentry envelopes',
  },
};

/** The bench's error events (workload.ts), of one app. */
function errorEvents(count: number, seed: number): WireEvent[] {
  const generator = new EventGenerator(seed);
  const out: WireEvent[] = [];
  while (out.length < count) {
    const e = generator.next();
    if (e.type === 'error') out.push({ ...e, source: { ...(e.source as object), app: APP } } as WireEvent);
  }
  return out;
}

/** `e` as a Sentry SDK sends it: an event item, with the same kind, message, stack frames and tags. */
function sentryItem(e: WireEvent): string {
  const w = e as unknown as {
    id: string;
    ts: number;
    name: string;
    source: { version?: string; env?: string };
    error: { message: string; kind: string };
    attributes: Record<string, unknown>;
  };
  const payload = JSON.stringify({
    event_id: w.id.replaceAll('-', ''),
    timestamp: w.ts / 1000,
    platform: 'javascript',
    level: 'error',
    logger: w.name,
    release: w.source.version,
    environment: w.source.env,
    tags: w.attributes,
    exception: {
      values: [
        {
          type: w.error.kind,
          value: w.error.message,
          stacktrace: {
            frames: [
              { function: 'onClick', filename: 'ui.js', lineno: 44, colno: 3 },
              { function: 'submit', filename: 'app.js', lineno: 120, colno: 7 },
            ],
          },
        },
      ],
    },
  });
  return `{"type":"event","length":${Buffer.byteLength(payload)}}\n${payload}\n`;
}

function buildBodies(count: number, seed: number): Record<Format, RequestBody[]> {
  const out: Record<Format, RequestBody[]> = { events: [], sentry: [] };
  const events = errorEvents(count * EVENTS_PER_BODY, seed);
  for (let b = 0; b < count; b++) {
    const part = events.slice(b * EVENTS_PER_BODY, (b + 1) * EVENTS_PER_BODY);
    out.events.push({ bytes: Buffer.from(JSON.stringify({ events: part })), events: part.length });
    out.sentry.push({ bytes: Buffer.from(`{}\n${part.map(sentryItem).join('')}`), events: part.length });
  }
  return out;
}

async function runSentryFormat(
  ctx: BenchContext,
  format: Format,
  bodies: readonly RequestBody[],
  warmup: readonly RequestBody[],
  label: string,
): Promise<FormatRun> {
  const db = await ctx.databases.fresh(label);
  const collector = await startCollector({
    databaseUrl: db.url,
    ack: 'queued',
    extraEnv: { SLUICE_SENTRY_PROJECTS: `${PROJECT}=${APP}` },
  });
  const f = FORMATS[format];
  try {
    const target = {
      collector,
      databaseUrl: db.url,
      origin: collector.origin,
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
 * The bench's error events as Sentry envelopes (100 event items each, as an SDK's batch of
 * exceptions would be sent) against the same events on `POST /v1/events` (PostgreSQL,
 * acknowledged when queued), two rounds alternating the formats; the better round of each
 * counts. Figures: events/s stored, collector CPU per stored event, body bytes per event. No
 * target: the row says what the Sentry front costs.
 */
export async function runSentryBench(ctx: BenchContext): Promise<BenchRow[]> {
  const bodyCount = ctx.options.quick ? 200 : 800;
  ctx.progress(`sentry: building ${bodyCount * EVENTS_PER_BODY} errors in two formats`);
  const bodies = buildBodies(bodyCount, 1);
  const warmup = buildBodies(WARMUP_BODIES, 2);
  const runs: Record<Format, FormatRun[]> = { events: [], sentry: [] };
  for (let r = 0; r < 2; r++) {
    for (const format of Object.keys(FORMATS) as Format[]) {
      ctx.progress(`sentry: ${format}, round ${r + 1}`);
      runs[format].push(
        await runSentryFormat(ctx, format, bodies[format], warmup[format], `sentry_${format}_${r}`),
      );
    }
  }
  const best = (rs: FormatRun[]) => rs.reduce((a, b) => (b.storedPerSecond > a.storedPerSecond ? b : a));
  const extra = (format: Format) => {
    const b = best(runs[format]);
    return {
      runs_events_s: runs[format].map((x) => Math.round(x.storedPerSecond)).join('/'),
      cpu_us_per_event: round(b.cpuMicrosPerEvent),
      body_bytes_per_event: Math.round(b.bytesPerEvent),
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
      FORMATS.sentry.label,
      best(runs.sentry).storedPerSecond,
      'events/s stored',
      baseline,
      undefined,
      extra('sentry'),
    ),
  ];
}
