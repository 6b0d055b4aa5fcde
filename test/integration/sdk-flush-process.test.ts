/**
 * `flush()` in a short-lived Node process: a script (ES module, top-level
 * `await`) captures a burst, awaits `client.flush({ timeoutMs })` and ends on
 * its own — no `process.exit`. It must end with code 0 once everything has
 * left, even while the collector answers 429 and the SDK waits out
 * `Retry-After` (its only pending work then is a timer).
 *
 * The collector is a real process (`node dist/src/cli.js serve`, SQLite in a
 * temporary folder) with a per-app rate limit. Build first: `npm run build`.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ClientStats, WireEvent } from '../../sdk/src/node';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { getJson, waitFor } from '../support/http';

/** The package's ES module Node entry, as built by `npm run build`. */
const SDK_NODE_DIST = path.resolve(__dirname, '../../sdk/dist/node.mjs');

/**
 * Non-error events per second per app. Above one default batch (100 events),
 * so a collector that admits each request's share all-or-nothing can serve
 * the burst too; it still answers 429 within the burst, so `flush()` must
 * wait out `Retry-After` at least once.
 */
const RATE_LIMIT = 20;
const METRICS = 200;
const ERRORS = 25;
const FLUSH_TIMEOUT_MS = 40_000;

interface ChildResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stats: ClientStats | undefined;
  readonly stderr: string;
}

/** Runs `source` as an ES module in its own Node process; resolves when it has ended. */
function runModule(source: string): Promise<ChildResult> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise((resolve) =>
    child.once('close', (code, signal) => {
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      resolve({ code, signal, stats: line ? (JSON.parse(line) as ClientStats) : undefined, stderr });
    }),
  );
}

async function storedEvents(collector: CollectorProcess, app: string): Promise<WireEvent[]> {
  const res = await getJson(`${collector.url}/v1/events?${new URLSearchParams({ app, limit: '1000' })}`);
  if (res.status !== 200) throw new Error(`GET /v1/events: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.events as WireEvent[];
}

/** `type:seq` of each stored event, e.g. `error:3`, `load.sample_summary:17`. */
function keysOf(events: readonly WireEvent[]): string[] {
  return events.map((e) => `${e.type === 'error' ? 'error' : e.name}:${String(e.attributes?.seq)}`);
}

let collector: CollectorProcess;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-sdk-flush-'));
  collector = await startCollectorProcess({
    SLUICE_SQLITE_PATH: path.join(dir, 'sluice.db'),
    SLUICE_RATE_LIMIT: String(RATE_LIMIT),
    // A burst of one second of the limit: the scripts below meet a 429 to wait out.
    SLUICE_RATE_LIMIT_BURST: '1s',
  });
});

afterAll(async () => {
  await collector?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('SDK flush() in a short-lived Node process', () => {
  // Defaults otherwise (aggregation on; the Node client's exit hooks on). Each metric has its own
  // attributes, so each leaves as its own summary event when flush() closes the windows. The core
  // client has no exit hooks: nothing but flush() itself can keep its process alive.
  it.each([
    ['the Node client (createNodeClient)', 'createNodeClient'],
    ['the core client (createClient, no exit hooks)', 'createClient'],
  ])(
    '%s: a script that awaits flush() through 429s ends on its own, code 0, everything stored once',
    async (_, factory) => {
      const app = `sdk-flush-${factory}-${process.pid}`;
      const script = `
      import * as sdk from ${JSON.stringify(SDK_NODE_DIST)};
      const client = sdk.${factory}({
        endpoint: ${JSON.stringify(`${collector.url}/v1/events`)},
        app: ${JSON.stringify(app)},
      });
      for (let i = 0; i < ${METRICS}; i++) client.metric('load.sample', i, { seq: i });
      for (let i = 0; i < ${ERRORS}; i++) client.error(new Error('load ' + i), { seq: i });
      await client.flush({ timeoutMs: ${FLUSH_TIMEOUT_MS} });
      process.stdout.write(JSON.stringify(client.stats()) + '\\n');
    `;
      const result = await runModule(script);

      expect({ code: result.code, signal: result.signal, stderr: result.stderr }).toEqual({
        code: 0,
        signal: null,
        stderr: '',
      });
      const stats = result.stats!;
      expect(stats).toBeDefined();
      expect(stats.requests.throttled).toBeGreaterThan(0); // flush() really waited out a Retry-After
      expect(stats).toMatchObject({
        buffered: { total: 0 },
        inFlight: 0,
        aggregating: 0,
        internalErrors: 0,
        dropped: { sampled: 0, buffer_full: 0, rejected: 0, client_error: 0, invalid: 0, closed: 0 },
      });
      expect(stats.captured).toBe(METRICS + ERRORS);
      expect(stats.sent).toBe(stats.captured);

      // Every captured event is stored exactly once (202 means queued: poll until written).
      const expected = [
        ...Array.from({ length: METRICS }, (_, i) => `load.sample_summary:${i}`),
        ...Array.from({ length: ERRORS }, (_, i) => `error:${i}`),
      ].sort();
      const stored = await waitFor(
        'every captured event to be stored',
        async () => {
          const events = await storedEvents(collector, app);
          return events.length >= expected.length ? events : null;
        },
        15_000,
      );
      expect(keysOf(stored).sort()).toEqual(expected);
      expect(new Set(stored.map((e) => e.id)).size).toBe(stored.length);
    },
    90_000,
  );
});
