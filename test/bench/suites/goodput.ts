/**
 * Goodput: the four lines of defence together. Apps using the SDK with its defaults send at 0.25,
 * 0.5, 1, 1.5, 3 and 10 × the collector's default limit (100 events/s, a burst of 10 s of it),
 * side by side, into a collector with its defaults on PostgreSQL; what each stored is compared with
 * what it could have: all of it up to the limit, else what the limit allows over the run (its burst
 * plus the limit over the time it sends). Three more apps go at 1.5, 3 and 10 × for 15 s and then at
 * a quarter of the limit, to time the SDK's rate back to 1. Then, with limits off, apps offer about
 * twice what the collector stores (measured just before in the same run), to check that what is
 * stored stays near that capacity and that no error is sampled. Last, with limits off, one app
 * floods far past that capacity beside quiet apps at 10 events/s: each quiet app keeps what it
 * generated (fair shares of the lanes and of the overload gate). The curve is drawn to
 * docs/goodput.png (docs/performance.md shows it).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { launchChromium } from '../../support/chromium';
import { startCollector } from '../collector-process';
import type { BenchContext } from '../context';
import { createHttpClient } from '../http-client';
import { runClosedLoop } from '../load-closed';
import { statusCount } from '../load-result';
import type { RequestBody } from '../workload';
import { bounded, figure, round } from '../rows';
import { runSdkApps, settledAfterMs, type AppRun } from '../sdk-load';
import type { BenchRow } from '../types';
import { runSluiceClosed } from './sluice-closed';

const SUITE = 'goodput';
/** The collector's defaults: `SLUICE_RATE_LIMIT` and `SLUICE_RATE_LIMIT_BURST`. */
const LIMIT = 100;
const BURST_SECONDS = 10;
const MULTIPLES = [0.25, 0.5, 1, 1.5, 3, 10] as const;
const RETURN_MULTIPLES = [1.5, 3, 10] as const;
/** How long the apps of the curve send (seconds). */
const LOAD_SECONDS = { quick: 15, full: 30 };
/** The overloaded run: apps that share twice the capacity. */
const OVERLOAD_APPS = 20;
/** The fair-share run: one app floods, beside quiet apps using the SDK at 10 events/s each. */
const QUIET_APPS = 3;
const QUIET_PER_SECOND = 10;
/** The flood: concurrent senders of bodies of 1,000 events, cycling through `FLOOD_BODIES` of them. */
const FLOOD_SENDERS = 16;
const FLOOD_BODIES = 100;
const FLOOD_BODY_EVENTS = 1000;
const CHART = path.resolve(__dirname, '..', '..', '..', '..', 'docs', 'goodput.png');

interface Stored {
  readonly logs: number;
  readonly errors: number;
}

/** Rows each app stored, by type, straight from the database. */
async function storedByApp(url: string): Promise<Map<string, Stored>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ app: string; type: string; n: string }>(
      'SELECT app, type, count(*) AS n FROM events GROUP BY app, type',
    );
    const out = new Map<string, { logs: number; errors: number }>();
    for (const r of rows) {
      const s = out.get(r.app) ?? { logs: 0, errors: 0 };
      if (r.type === 'error') s.errors += Number(r.n);
      else s.logs += Number(r.n);
      out.set(r.app, s);
    }
    return out;
  } finally {
    await client.end();
  }
}

/** Waits until the database holds as many rows as `expected` says it will settle to (or 30 s). */
async function settledStore(url: string, runs: readonly AppRun[]): Promise<Map<string, Stored>> {
  let last = new Map<string, Stored>();
  for (let i = 0; i < 60; i++) {
    last = await storedByApp(url);
    const all = runs.every((r) => {
      const s = last.get(r.app);
      return (
        s !== undefined && s.logs + s.errors + r.sampled + r.bufferFull + r.unsent >= r.events + r.errors
      );
    });
    if (all) return last;
    await new Promise((r) => setTimeout(r, 500));
  }
  return last;
}

interface CurvePoint {
  readonly multiple: number;
  readonly offeredPerSecond: number;
  readonly storedPerSecond: number;
  readonly allowedPerSecond: number;
}

export async function runGoodputBench(ctx: BenchContext): Promise<BenchRow[]> {
  const seconds = ctx.options.quick ? LOAD_SECONDS.quick : LOAD_SECONDS.full;
  const rows: BenchRow[] = [];
  const points: CurvePoint[] = [];

  // 1. The curve, with every default.
  const db = await ctx.databases.fresh('goodput');
  const collector = await startCollector({
    databaseUrl: db.url,
    ack: 'queued',
    // The bench's collectors run without limits; this suite measures them, at their default.
    extraEnv: { SLUICE_RATE_LIMIT: String(LIMIT) },
  });
  try {
    ctx.progress(`goodput: ${MULTIPLES.length} apps at ${MULTIPLES.join(', ')} × the limit for ${seconds} s`);
    const runs = await runSdkApps(`${collector.origin}/v1/events`, [
      ...MULTIPLES.map((m) => ({ app: `curve-${m}`, perSecond: LIMIT * m, seconds })),
      ...RETURN_MULTIPLES.map((m) => ({
        app: `return-${m}`,
        perSecond: LIMIT * m,
        seconds: 15,
        after: { perSecond: LIMIT / 4, seconds: 90 },
      })),
    ]);
    const stored = await settledStore(db.url, runs);
    for (const m of MULTIPLES) {
      const run = runs.find((r) => r.app === `curve-${m}`) as AppRun;
      const s = stored.get(run.app) ?? { logs: 0, errors: 0 };
      // What the limit allows while the app sends: its burst plus the limit over the load (the
      // clients close together after the longest app, so their close time is not the app's).
      const runSeconds = seconds;
      const generated = run.events;
      const allowed = Math.min(generated, LIMIT * (BURST_SECONDS + runSeconds));
      // A backlog sent at close may add more than the load's allowance: at most 1.
      const ratio = allowed > 0 ? Math.min(1, s.logs / allowed) : NaN;
      const within = m <= 1;
      // At or below the limit: everything stored, nothing sampled. Above: what the limit allows.
      const target = within ? 0.99 : 0.95;
      points.push({
        multiple: m,
        offeredPerSecond: (run.events + run.errors) / seconds,
        storedPerSecond: (s.logs + s.errors) / runSeconds,
        allowedPerSecond:
          (Math.min(generated, LIMIT * (BURST_SECONDS + runSeconds)) + run.errors) / runSeconds,
      });
      rows.push(
        bounded(
          SUITE,
          `${m} × the limit: stored ÷ ${within ? 'generated' : 'what the limit allows'}`,
          round(ratio),
          'ratio',
          `≥ ${target}${within ? ', none sampled' : ''}`,
          ratio >= target && (!within || run.sampled === 0) && s.errors === run.errors,
          {
            generated,
            stored: s.logs,
            allowed: Math.round(allowed),
            sampled: run.sampled,
            buffer_full: run.bufferFull,
            errors_stored: `${s.errors}/${run.errors}`,
            settled_after_s: round(settledAfterMs(run.trace, seconds * 1000) / 1000),
            final_rate: run.trace[run.trace.length - 1]?.[1] ?? 1,
          },
        ),
      );
    }
    for (const m of RETURN_MULTIPLES) {
      const run = runs.find((r) => r.app === `return-${m}`) as AppRun;
      rows.push(
        figure(
          SUITE,
          `${m} × for 15 s, then 0.25 ×: the SDK's rate back to 1 after`,
          run.returnedAfterMs === null ? NaN : round(run.returnedAfterMs / 1000),
          's',
          {
            settled_after_s: round(settledAfterMs(run.trace, 15_000) / 1000),
            lowest_rate: Math.min(...run.trace.map(([, r]) => r)),
          },
        ),
      );
    }
  } finally {
    await collector.stop();
    await ctx.databases.drop(db);
  }

  // 2. Limits off at about twice what the collector stores.
  ctx.progress("goodput: the collector's capacity, limits off");
  const capacity = await runSluiceClosed(ctx, {
    ack: 'queued',
    concurrency: 4,
    bodies: ctx.batches.bodies,
    label: 'goodput_capacity',
  });
  const C = capacity.storedPerSecond;
  const overDb = await ctx.databases.fresh('goodput_overload');
  const over = await startCollector({ databaseUrl: overDb.url, ack: 'queued' });
  try {
    ctx.progress(`goodput: ${OVERLOAD_APPS} apps offering ${Math.round(2 * C)} events/s in all, limits off`);
    const cpu0 = over.sample().cpuSeconds;
    const self0 = process.cpuUsage();
    const runs = await runSdkApps(
      `${over.origin}/v1/events`,
      Array.from({ length: OVERLOAD_APPS }, (_, i) => ({
        app: `over-${i}`,
        perSecond: (2 * C) / OVERLOAD_APPS,
        seconds,
      })),
    );
    const self = process.cpuUsage(self0);
    const stored = await settledStore(overDb.url, runs);
    const collectorCpu = over.sample().cpuSeconds - cpu0;
    let storedEvents = 0;
    let errorsStored = 0;
    let errors = 0;
    let offered = 0;
    let sampled = 0;
    let bufferFull = 0;
    let span = 0;
    for (const r of runs) {
      const s = stored.get(r.app) ?? { logs: 0, errors: 0 };
      storedEvents += s.logs + s.errors;
      errorsStored += s.errors;
      errors += r.errors;
      offered += r.events + r.errors;
      sampled += r.sampled;
      bufferFull += r.bufferFull;
      span = Math.max(span, r.closedAt - r.startedAt);
    }
    const storedPerSecond = storedEvents / (span / 1000);
    const ratio = storedPerSecond / C;
    rows.push(
      bounded(
        SUITE,
        'limits off, 2 × capacity offered: stored ÷ capacity',
        round(ratio),
        'ratio',
        '≥ 0.9, every error stored',
        ratio >= 0.9 && errorsStored === errors,
        {
          capacity_per_s: Math.round(C),
          offered_per_s: Math.round(offered / seconds),
          stored_per_s: Math.round(storedPerSecond),
          sampled,
          buffer_full: bufferFull,
          errors_stored: `${errorsStored}/${errors}`,
          // Where the CPU went: the SDK apps run in this process, beside the collector; the
          // capacity's closed loop sends prepared bodies and costs next to nothing.
          collector_cpu_s_per_million: round((collectorCpu / storedEvents) * 1e6),
          capacity_cpu_s_per_million: round(capacity.cpuSecondsPerMillion),
          sdk_apps_cpu_s: round((self.user + self.system) / 1e6),
          collector_cpu_s: round(collectorCpu),
          span_s: round(span / 1000),
        },
      ),
    );
  } finally {
    await over.stop();
    await ctx.databases.drop(overDb);
  }

  // 3. Limits off, one app flooding far past capacity beside quiet apps: fair shares.
  const fairDb = await ctx.databases.fresh('goodput_fair');
  const fair = await startCollector({ databaseUrl: fairDb.url, ack: 'queued' });
  try {
    ctx.progress(`goodput: one app flooding, ${QUIET_APPS} apps at ${QUIET_PER_SECOND} events/s, limits off`);
    const client = createHttpClient(fair.origin, FLOOD_SENDERS);
    const [flood, quiet] = await Promise.all([
      runClosedLoop({
        client,
        path: '/v1/events',
        bodies: floodBodies('flood'),
        // The flood's events are not counted: a body sent again is stored once.
        maxRequests: 1_000_000,
        concurrency: FLOOD_SENDERS,
        maxMs: seconds * 1000,
      }),
      runSdkApps(
        `${fair.origin}/v1/events`,
        Array.from({ length: QUIET_APPS }, (_, i) => ({
          app: `quiet-${i}`,
          perSecond: QUIET_PER_SECOND,
          seconds,
        })),
      ),
    ]);
    await client.close();
    const stored = await settledStore(fairDb.url, quiet);
    let generated = 0;
    let kept = 0;
    let sampled = 0;
    let worst = 1;
    for (const r of quiet) {
      const s = stored.get(r.app) ?? { logs: 0, errors: 0 };
      generated += r.events + r.errors;
      kept += s.logs + s.errors;
      sampled += r.sampled;
      worst = Math.min(worst, (s.logs + s.errors) / Math.max(1, r.events + r.errors));
    }
    const offeredTimes = flood.sentEvents / seconds / C;
    rows.push(
      bounded(
        SUITE,
        'limits off, one app flooding: each quiet app stored ÷ generated',
        round(worst),
        'ratio',
        '≥ 0.99, none sampled',
        worst >= 0.99 && sampled === 0,
        {
          flood_offered_x_capacity: round(offeredTimes),
          flood_accepted: flood.accepted,
          flood_429: statusCount(flood, 429),
          quiet_generated: generated,
          quiet_stored: kept,
          quiet_sampled: sampled,
        },
      ),
    );
  } finally {
    await fair.stop();
    await ctx.databases.drop(fairDb);
  }

  await drawCurve(points, seconds).catch((err: unknown) =>
    ctx.progress(`goodput: no chart drawn (${(err as Error).message})`),
  );
  return rows;
}

/** `FLOOD_BODIES` bodies of `FLOOD_BODY_EVENTS` metric samples of `app` (sent without `X-Sluice-App`). */
function floodBodies(app: string): RequestBody[] {
  const ts = Date.now();
  return Array.from({ length: FLOOD_BODIES }, () => {
    const events = Array.from(
      { length: FLOOD_BODY_EVENTS },
      (_, i) =>
        `{"id":"${randomUUID()}","type":"metric","name":"flood.sample","ts":${ts},"source":{"app":"${app}"},"value":${i}}`,
    );
    return { bytes: Buffer.from(`{"events":[${events.join(',')}]}`), events: FLOOD_BODY_EVENTS };
  });
}

/** The curve as an SVG page, rendered to docs/goodput.png by Chromium. */
async function drawCurve(points: readonly CurvePoint[], seconds: number): Promise<void> {
  const W = 720;
  const H = 420;
  const pad = { left: 70, right: 20, top: 40, bottom: 60 };
  const xMax = Math.max(...points.map((p) => p.offeredPerSecond)) * 1.2;
  const xMin = Math.min(...points.map((p) => p.offeredPerSecond)) / 1.2;
  const yMax =
    Math.max(LIMIT * 1.3, ...points.map((p) => Math.max(p.storedPerSecond, p.allowedPerSecond))) * 1.1;
  const x = (v: number) =>
    pad.left +
    ((Math.log(v) - Math.log(xMin)) / (Math.log(xMax) - Math.log(xMin))) * (W - pad.left - pad.right);
  const y = (v: number) => H - pad.bottom - (v / yMax) * (H - pad.top - pad.bottom);
  const line = (pts: Array<[number, number]>) =>
    pts.map(([a, b], i) => `${i === 0 ? 'M' : 'L'}${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(' ');
  const allowedRate = (offered: number) => Math.min(offered, LIMIT * (1 + BURST_SECONDS / seconds));
  const grid: number[] = [];
  for (let v = xMin; v <= xMax; v *= 1.05) grid.push(v);
  const xTicks = [25, 50, 100, 200, 500, 1000].filter((v) => v >= xMin && v <= xMax);
  const yTicks = [0, 50, 100, 150, 200].filter((v) => v <= yMax);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">
<rect width="${W}" height="${H}" fill="white"/>
<text x="${W / 2}" y="22" text-anchor="middle" font-size="14">Stored against offered, one app with the SDK's defaults (${seconds} s, limit ${LIMIT}/s)</text>
${yTicks.map((v) => `<line x1="${pad.left}" x2="${W - pad.right}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/><text x="${pad.left - 8}" y="${y(v) + 4}" text-anchor="end">${v}</text>`).join('')}
${xTicks.map((v) => `<line y1="${pad.top}" y2="${H - pad.bottom}" x1="${x(v)}" x2="${x(v)}" stroke="#eee"/><text y="${H - pad.bottom + 18}" x="${x(v)}" text-anchor="middle">${v}</text>`).join('')}
<line x1="${pad.left}" x2="${W - pad.right}" y1="${y(LIMIT)}" y2="${y(LIMIT)}" stroke="#c33" stroke-dasharray="6 4"/>
<text x="${W - pad.right - 4}" y="${y(LIMIT) - 6}" text-anchor="end" fill="#c33">limit ${LIMIT}/s</text>
<path d="${line(grid.map((v) => [v, allowedRate(v)]))}" fill="none" stroke="#999" stroke-width="2"/>
<path d="${line(points.map((p) => [p.offeredPerSecond, p.storedPerSecond]))}" fill="none" stroke="#1565c0" stroke-width="2"/>
${points.map((p) => `<circle cx="${x(p.offeredPerSecond)}" cy="${y(p.storedPerSecond)}" r="4" fill="#1565c0"/>`).join('')}
<text x="${W / 2}" y="${H - 18}" text-anchor="middle">offered (events/s, log scale)</text>
<text transform="translate(18 ${H / 2}) rotate(-90)" text-anchor="middle">stored (events/s over the run)</text>
<rect x="${pad.left + 10}" y="${pad.top + 6}" width="250" height="44" fill="white" stroke="#ddd"/>
<line x1="${pad.left + 18}" x2="${pad.left + 48}" y1="${pad.top + 20}" y2="${pad.top + 20}" stroke="#1565c0" stroke-width="2"/><text x="${pad.left + 54}" y="${pad.top + 24}">stored</text>
<line x1="${pad.left + 18}" x2="${pad.left + 48}" y1="${pad.top + 38}" y2="${pad.top + 38}" stroke="#999" stroke-width="2"/><text x="${pad.left + 54}" y="${pad.top + 42}">what could be: min(offered, allowed)</text>
</svg>`;
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: W, height: H } });
    await page.setContent(`<html><body style="margin:0">${svg}</body></html>`);
    await writeFile(CHART, await page.screenshot({ clip: { x: 0, y: 0, width: W, height: H } }));
  } finally {
    await browser.close();
  }
}
