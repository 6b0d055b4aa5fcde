import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { freePort } from '../../src/dev-cluster/free-port';
import { getJson } from '../support/http';
import { startInProcess, type InProcessCollector } from '../support/in-process';

export type Encoding = 'json' | 'protobuf';

const OTEL_CLIENT = path.resolve(__dirname, '../../dist/test/support/processes/otel-client.js');

/** A collector (from the same assembly as `sluice serve`) with its OTLP receiver on a free port. */
export async function startWithOtlp(
  env: Record<string, string>,
): Promise<{ c: InProcessCollector; otlpUrl: string }> {
  const c = await startInProcess({ SLUICE_OTLP_PORT: String(await freePort()), ...env });
  const otlp = c.collector.otlp;
  if (otlp === null) throw new Error('the OTLP receiver did not start');
  return { c, otlpUrl: otlp.url };
}

/** A `service.name` no other test uses. */
export function uniqueApp(label: string): string {
  return `${label}-${randomUUID().slice(0, 8)}`;
}

export interface OtelClientRun {
  /** Result of each export the SDK made (code 0: success). */
  readonly exports: Array<{ code: number; error?: string }>;
  readonly [key: string]: any;
}

/**
 * Runs one scenario of the OpenTelemetry JS SDK in its own process (test/support/processes/
 * otel-client.ts; `npm run build` first) and resolves with what it printed.
 */
export function runOtelClient(scenario: Record<string, unknown>, timeoutMs = 40_000): Promise<OtelClientRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [OTEL_CLIENT, JSON.stringify(scenario)],
      { timeout: timeoutMs },
      (err, stdout, stderr) => {
        if (err) {
          const hint =
            (err as NodeJS.ErrnoException).code === 'ENOENT' || /Cannot find module/.test(stderr)
              ? ' (run `npm run build` first)'
              : '';
          reject(new Error(`otel client failed${hint}: ${err.message}\n${stderr}`));
          return;
        }
        const line = stdout.split('\n').find((l) => l.startsWith('{"event":"done"'));
        if (line === undefined) reject(new Error(`otel client printed no result:\n${stdout}\n${stderr}`));
        else resolve(JSON.parse(line) as OtelClientRun);
      },
    );
  });
}

/** OTLP requests the collector at `baseUrl` answered with `status` (`sluice_otlp_requests_total`). */
export async function otlpRequestCount(baseUrl: string, status: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('sluice_otlp_requests_total{') && line.includes(`status="${status}"`)) {
      total += Number(line.split(' ').pop());
    }
  }
  return total;
}

/** Every stored event of `app` (the read API, all pages). */
export async function storedEvents(baseUrl: string, app: string, extra = ''): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: any } = await getJson(
      `${baseUrl}/v1/events?app=${app}&limit=1000${extra}${cursor ? `&cursor=${cursor}` : ''}`,
    );
    if (page.status !== 200) throw new Error(`GET /v1/events answered ${page.status}`);
    out.push(...page.body.events);
    cursor = page.body.next_cursor;
  } while (cursor);
  return out;
}

/** Raw metric points of `name` for `app`, oldest first. */
export async function metricPoints(baseUrl: string, app: string, name: string): Promise<any[]> {
  const res = await getJson(`${baseUrl}/v1/metrics?app=${app}&name=${name}&resolution=raw`);
  if (res.status !== 200)
    throw new Error(`GET /v1/metrics answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.points;
}

/** Events of `app` grouped by their `seq` attribute. */
export function bySeq(events: readonly any[]): Map<number, any[]> {
  const out = new Map<number, any[]>();
  for (const e of events) out.set(e.attributes.seq, [...(out.get(e.attributes.seq) ?? []), e]);
  return out;
}
