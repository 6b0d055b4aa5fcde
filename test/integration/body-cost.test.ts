import http from 'node:http';
import { metric } from '../support/events';
import { startMeasuredCollector, type MeasuredCollector } from '../support/measured-collector';
import { tempSqlitePath } from '../support/postgres';

/** Bytes of every body compared: a normal 1000-event body, just under the default 1 MiB limit. */
const BODY_BYTES = 1_000_000;
/** Rounds timed after the warm-up; each round sends every body once, in turn. */
const ROUNDS = 7;
const WARMUP_ROUNDS = 2;
/**
 * The bound: a hostile body costs at most twice a normal body of the same size. Medians
 * of rounds interleaved in one process absorb a noisy neighbour on a shared two-core box. Before
 * the raw-byte scan, brackets cost 7 to 20 times the normal body here (the parse alone: 80 times),
 * and bodies of `{},` 10 times.
 */
const MAX_RATIO = 2;

function normalBody(): Buffer {
  const events = Array.from({ length: 1000 }, (_, i) => metric('body-cost', { value: i }));
  const bare = Buffer.byteLength(JSON.stringify({ events }));
  // Pad one attribute per event so the whole body is BODY_BYTES long.
  const pad = Math.floor((BODY_BYTES - bare) / events.length) - '"pad":"",'.length;
  for (const e of events) e.attributes = { route: '/checkout', pad: 'x'.repeat(Math.min(pad, 1000)) };
  const text = JSON.stringify({ events });
  return Buffer.from(text + ' '.repeat(BODY_BYTES - Buffer.byteLength(text)));
}

/** `prefix`, then `open` repeated, then `close` repeated, padded with spaces to BODY_BYTES. */
function nested(prefix: string, open: string, middle: string, close: string, suffix: string): Buffer {
  const n = Math.floor(
    (BODY_BYTES - prefix.length - middle.length - suffix.length) / (open.length + close.length),
  );
  const text = `${prefix}${open.repeat(n)}${middle}${close.repeat(n)}${suffix}`;
  return Buffer.from(text + ' '.repeat(BODY_BYTES - text.length));
}

const BODIES: ReadonlyArray<readonly [string, Buffer]> = [
  ['normal', normalBody()],
  ['unterminated [', Buffer.from('['.repeat(BODY_BYTES))],
  ['nested arrays', nested('{"events":[', '[', '', ']', ']}')],
  ['nested objects', nested('{"events":[],"x":', '{"a":', '1', '}', '}')],
  // Within the depth limit, but more values than any request of the contract holds.
  ['wide arrays', nested('{"events":[],"x":[', '[],', '0', '', ']}')],
  ['wide objects', nested('{"events":[],"x":[', '{},', '0', '', ']}')],
  ['numbers', nested('{"events":[],"x":[', '1,', '0', '', ']}')],
];

function post(url: string, agent: http.Agent, body: Buffer): Promise<{ status: number; ms: number }> {
  const { hostname, port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        host: hostname,
        port,
        method: 'POST',
        path: '/v1/events',
        headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** Cost before parse: what a body costs the collector is bounded by its size, not by its shape. */
describe('cost of a hostile body against a normal one of the same size', () => {
  let c: MeasuredCollector;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    // Default settings except shedding: a request shed unread costs nothing, whatever its body.
    c = await startMeasuredCollector({
      SLUICE_SQLITE_PATH: tempSqlitePath('body-cost'),
      SLUICE_SHED_LAG_MS: '0',
    });
  });

  afterAll(async () => {
    agent.destroy();
    await c?.stop();
  });

  it(`costs at most ${MAX_RATIO}× (median of ${ROUNDS} interleaved rounds)`, async () => {
    expect(BODIES.map(([, b]) => b.length)).toEqual(BODIES.map(() => BODY_BYTES));
    const times = new Map<string, number[]>(BODIES.map(([name]) => [name, []]));
    const statuses = new Map<string, Set<number>>(BODIES.map(([name]) => [name, new Set()]));
    for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
      for (const [name, body] of BODIES) {
        const { status, ms } = await post(c.url, agent, body);
        statuses.get(name)?.add(status);
        if (round >= WARMUP_ROUNDS) times.get(name)?.push(ms);
      }
    }
    // The normal body is read, parsed and (up to the default rate limit) taken; the others are
    // refused on their raw bytes (too_deep, too_many_values).
    const normalStatuses = [...(statuses.get('normal') ?? [])];
    statuses.delete('normal');
    expect(Object.fromEntries([...statuses].map(([n, s]) => [n, [...s]]))).toEqual({
      'unterminated [': [400],
      'nested arrays': [400],
      'nested objects': [400],
      'wide arrays': [413],
      'wide objects': [413],
      numbers: [413],
    });
    // Taken while the app's burst lasts, then throttled: 202 and 429 only.
    expect(normalStatuses.length).toBeGreaterThan(0);
    expect(normalStatuses.filter((status) => status !== 202 && status !== 429)).toEqual([]);

    const normal = median(times.get('normal') ?? []);
    const ratios = Object.fromEntries(
      BODIES.slice(1).map(([name]) => [name, Number((median(times.get(name) ?? []) / normal).toFixed(2))]),
    );
    process.stdout.write(
      `body cost: normal median ${normal.toFixed(1)} ms; hostile/normal ${JSON.stringify(ratios)}\n`,
    );
    for (const ratio of Object.values(ratios)) expect(ratio).toBeLessThanOrEqual(MAX_RATIO);
  });
});
