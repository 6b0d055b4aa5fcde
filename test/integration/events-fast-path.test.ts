import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { generateKey } from '../../src/auth/api-keys';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { startInProcess } from '../support/in-process';
import { tempSqlitePath } from '../support/postgres';

/**
 * `POST /v1/events` and its preflight are served by the request listener in front of Express
 * (events-listener.ts); a request with an absolute-form target (RFC 9112 §3.2.2) is not taken by
 * it and reaches the Express route, which runs the same functions. Every request here is sent in
 * both forms, over raw sockets, and the two answers must be identical: status line, every header
 * but `Date`, in order, and body. The expected status and error code pin today's answers.
 */

interface RawAnswer {
  readonly statusLine: string;
  /** `name: value` lines as sent, `Date` left out. */
  readonly headers: readonly string[];
  readonly body: string;
}

interface Case {
  readonly name: string;
  readonly method: string;
  /** Path and query string. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer | string;
  /** Sent as Content-Length instead of the body's length (the body is then cut short). */
  readonly declaredLength?: number;
  readonly status: number;
  readonly error?: string;
}

const ANSWER_TIMEOUT_MS = 10_000;

/** Sends one request on a new connection and reads one answer (Content-Length framed, or to the close). */
function exchange(port: number, target: string, c: Case): Promise<RawAnswer> {
  const body = c.body === undefined ? Buffer.alloc(0) : Buffer.from(c.body);
  const headers: Record<string, string> = {
    Host: `127.0.0.1:${port}`,
    ...c.headers,
    ...(c.method === 'POST' && { 'Content-Length': String(c.declaredLength ?? body.length) }),
  };
  const head =
    `${c.method} ${target} HTTP/1.1\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    '\r\n';
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to ${c.name} (${target})`));
    }, ANSWER_TIMEOUT_MS);
    let received = Buffer.alloc(0);
    const parse = (ended: boolean): RawAnswer | null => {
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return null;
      const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const length = lines.find((l) => /^content-length:/i.test(l));
      const bodyBytes = received.subarray(end + 4);
      if (length !== undefined && bodyBytes.length < Number(length.split(':')[1])) return null;
      const noBody = /^HTTP\/1\.1 (204|304) /.test(statusLine ?? '');
      if (length === undefined && !noBody && !ended) return null;
      return {
        statusLine: statusLine ?? '',
        headers: lines.filter((l) => !/^date:/i.test(l)),
        body: bodyBytes.toString('utf8'),
      };
    };
    const done = (answer: RawAnswer): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const answer = parse(false);
      if (answer) done(answer);
    });
    socket.on('end', () => {
      const answer = parse(true);
      if (answer) done(answer);
      else reject(new Error(`connection closed before an answer to ${c.name}`));
    });
    socket.on('error', (err) => {
      // A refusal may close the connection while the client still writes: the answer came first.
      const answer = parse(true);
      if (answer) done(answer);
      else reject(err);
    });
    socket.write(head);
    if (body.length > 0) socket.write(body);
  });
}

const isOverloaded = (a: RawAnswer): boolean =>
  a.statusLine.includes(' 429 ') && a.body.includes('"overloaded"');

/** The answer by the listener (origin-form) and by Express (absolute-form), sent again while shed. */
async function bothForms(
  c: Pick<CollectorProcess, 'port'>,
  k: Case,
): Promise<{ fast: RawAnswer; app: RawAnswer }> {
  for (let attempt = 0; ; attempt++) {
    const fast = await exchange(c.port, k.path, k);
    const app = await exchange(c.port, `http://127.0.0.1:${c.port}${k.path}`, k);
    // The user defaults shed when the process falls behind (jest workers share the cores).
    if (!(isOverloaded(fast) || isOverloaded(app)) || attempt === 4) return { fast, app };
  }
}

function expectSameAnswer(k: Case, fast: RawAnswer, app: RawAnswer): void {
  expect(fast).toEqual(app);
  expect(fast.statusLine).toMatch(new RegExp(`^HTTP/1\\.1 ${k.status} `));
  if (k.error !== undefined) expect(JSON.parse(fast.body)).toMatchObject({ error: k.error });
}

const json = { 'Content-Type': 'application/json', 'X-Request-Id': 'fast-path-test' };
const oneEvent = () => JSON.stringify({ events: [metric('fast-path')] });
/** Arrays nested `levels` deep. */
const deepArray = (levels: number): unknown => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`);

describe('POST /v1/events: the listener and the Express route answer alike (user defaults)', () => {
  let c: CollectorProcess;
  beforeAll(async () => {
    c = await startCollectorProcess(
      { SLUICE_SQLITE_PATH: tempSqlitePath('fast-path') },
      { defaults: 'user' },
    );
  });
  afterAll(async () => {
    await c?.stop();
  });

  const cases: Case[] = [
    { name: 'valid', method: 'POST', path: '/v1/events', headers: json, body: oneEvent(), status: 202 },
    {
      name: 'valid, query string',
      method: 'POST',
      path: '/v1/events?source=test',
      headers: json,
      body: oneEvent(),
      status: 202,
    },
    {
      name: 'valid, gzip',
      method: 'POST',
      path: '/v1/events',
      headers: { ...json, 'Content-Encoding': 'gzip' },
      body: gzipSync(oneEvent()),
      status: 202,
    },
    {
      name: 'a rejected event',
      method: 'POST',
      path: '/v1/events',
      headers: json,
      body: JSON.stringify({ events: [{ type: 'metric' }] }),
      status: 422,
      error: 'events_rejected',
    },
    {
      name: 'invalid JSON',
      method: 'POST',
      path: '/v1/events',
      headers: json,
      body: '{"events": [',
      status: 400,
      error: 'invalid_json',
    },
    {
      name: 'no events array',
      method: 'POST',
      path: '/v1/events',
      headers: json,
      body: '{"event": []}',
      status: 400,
      error: 'invalid_body',
    },
    {
      name: 'not UTF-8',
      method: 'POST',
      path: '/v1/events',
      headers: json,
      body: Buffer.from([0x7b, 0xff, 0x7d]),
      status: 400,
      error: 'invalid_utf8',
    },
    {
      name: 'too deep',
      method: 'POST',
      path: '/v1/events',
      headers: json,
      body: '['.repeat(100),
      status: 400,
      error: 'too_deep',
    },
    {
      // Read by the single pass up to the nesting: the shape check runs when the pass meets it.
      name: 'too deep in an unknown member of a valid event',
      method: 'POST',
      path: '/v1/events',
      headers: json,
      body: JSON.stringify({ events: [{ ...metric('fast-path'), extra: deepArray(20) }] }),
      status: 400,
      error: 'too_deep',
    },
    {
      name: 'too deep in the report after valid events',
      method: 'POST',
      path: '/v1/events',
      headers: json,
      body: JSON.stringify({ events: [metric('fast-path')], report: deepArray(20) }),
      status: 400,
      error: 'too_deep',
    },
    {
      name: 'wrong content type',
      method: 'POST',
      path: '/v1/events',
      headers: { ...json, 'Content-Type': 'text/plain' },
      body: oneEvent(),
      status: 415,
      error: 'unsupported_media_type',
    },
    {
      name: 'no content type',
      method: 'POST',
      path: '/v1/events',
      headers: { 'X-Request-Id': 'fast-path-test' },
      body: oneEvent(),
      status: 415,
      error: 'unsupported_media_type',
    },
    {
      name: 'unknown content encoding',
      method: 'POST',
      path: '/v1/events',
      headers: { ...json, 'Content-Encoding': 'br' },
      body: oneEvent(),
      status: 415,
      error: 'unsupported_encoding',
    },
    {
      name: 'bad gzip',
      method: 'POST',
      path: '/v1/events',
      headers: { ...json, 'Content-Encoding': 'gzip' },
      body: 'not gzip',
      status: 400,
      error: 'invalid_gzip',
    },
    {
      name: 'oversize body (declared)',
      method: 'POST',
      path: '/v1/events',
      headers: json,
      body: '{"events": [',
      declaredLength: 1024 * 1024 + 1,
      status: 413,
      error: 'body_too_large',
    },
    { name: 'no request id', method: 'POST', path: '/v1/events', headers: {}, body: '', status: 415 },
    {
      name: 'PUT on the path',
      method: 'PUT',
      path: '/v1/events',
      headers: json,
      status: 405,
      error: 'method_not_allowed',
    },
    {
      name: 'OPTIONS without CORS',
      method: 'OPTIONS',
      path: '/v1/events',
      headers: json,
      status: 405,
      error: 'method_not_allowed',
    },
    ...['/v1/events/', '/V1/EVENTS', '/v1/Events', '/v1/events/x'].map((p): Case => ({
      name: `POST ${p}`,
      method: 'POST',
      path: p,
      headers: json,
      body: oneEvent(),
      status: 404,
      error: 'not_found',
    })),
  ];

  it.each(cases.map((k) => [k.name, k] as const))('%s', async (_name, k) => {
    const { fast, app } = await bothForms(c, k);
    if (k.name === 'no request id') {
      // Each answer gets an id of its own: only its shape can match.
      const id = (a: RawAnswer) => a.headers.find((h) => h.startsWith('X-Request-Id: '));
      expect(id(fast)).toMatch(/^X-Request-Id: [0-9a-f-]{36}$/);
      expect(id(app)).toMatch(/^X-Request-Id: [0-9a-f-]{36}$/);
      const rest = (a: RawAnswer) => ({ ...a, headers: a.headers.filter((h) => h !== id(a)) });
      expectSameAnswer(k, rest(fast), rest(app));
      return;
    }
    expectSameAnswer(k, fast, app);
    if (k.status === 413) expect(fast.headers).toContain('Connection: close');
    else expect(fast.headers).toContain('Connection: keep-alive');
    expect(fast.headers).toContain('X-Request-Id: fast-path-test');
  });

  it('both count in the request duration metric under the route template', async () => {
    const k = cases[0] as Case;
    const count = async (): Promise<number> => {
      const text = await (await fetch(`${c.url}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) =>
          l.startsWith(
            'sluice_http_request_duration_seconds_count{route="/v1/events",method="POST",status="202"}',
          ),
        );
      return Number(line?.split(' ')[1] ?? 0);
    };
    const before = await count();
    const { fast, app } = await bothForms(c, k);
    expectSameAnswer(k, fast, app);
    // The metric is recorded on 'finish', which may come just after the answer reached the client.
    for (let i = 0; i < 50 && (await count()) < before + 2; i++) await new Promise((r) => setImmediate(r));
    expect(await count()).toBe(before + 2);
  });
});

describe('POST /v1/events with API keys and CORS: the listener and the Express route answer alike', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sluice-fast-path-'));
  const shop = generateKey('ingest', 'shop-1', 'fast-path');
  const grafana = generateKey('read', 'grafana');
  const keysFile = path.join(dir, 'keys.json');
  writeFileSync(keysFile, JSON.stringify({ keys: [shop.entry, grafana.entry] }));
  const origin = 'https://shop.example';

  let c: CollectorProcess;
  beforeAll(async () => {
    c = await startCollectorProcess(
      {
        SLUICE_SQLITE_PATH: tempSqlitePath('fast-path-cors'),
        SLUICE_AUTH_KEYS_FILE: keysFile,
        SLUICE_CORS_ORIGINS: origin,
      },
      { defaults: 'user' },
    );
  });
  afterAll(async () => {
    await c?.stop();
  });

  const withKey = { ...json, 'X-Api-Key': shop.secret };
  const preflight = {
    'X-Request-Id': 'fast-path-test',
    'Access-Control-Request-Method': 'POST',
    'Access-Control-Request-Headers': 'content-type, x-api-key',
  };
  const cases: Case[] = [
    {
      name: 'valid key',
      method: 'POST',
      path: '/v1/events',
      headers: withKey,
      body: oneEvent(),
      status: 202,
    },
    {
      name: 'Bearer key',
      method: 'POST',
      path: '/v1/events',
      headers: { ...json, Authorization: `Bearer ${shop.secret}` },
      body: oneEvent(),
      status: 202,
    },
    {
      name: 'no key',
      method: 'POST',
      path: '/v1/events',
      headers: json,
      body: oneEvent(),
      status: 401,
      error: 'unauthorized',
    },
    {
      name: 'bad key',
      method: 'POST',
      path: '/v1/events',
      headers: { ...json, 'X-Api-Key': 'sk_in_not-a-key' },
      body: oneEvent(),
      status: 401,
      error: 'unauthorized',
    },
    {
      name: 'read token',
      method: 'POST',
      path: '/v1/events',
      headers: { ...json, 'X-Api-Key': grafana.secret },
      body: oneEvent(),
      status: 401,
      error: 'unauthorized',
    },
    {
      name: 'CORS actual, allowed origin',
      method: 'POST',
      path: '/v1/events',
      headers: { ...withKey, Origin: origin },
      body: oneEvent(),
      status: 202,
    },
    {
      name: 'CORS actual, allowed origin, no key',
      method: 'POST',
      path: '/v1/events',
      headers: { ...json, Origin: origin },
      body: oneEvent(),
      status: 401,
      error: 'unauthorized',
    },
    {
      name: 'CORS actual, other origin',
      method: 'POST',
      path: '/v1/events',
      headers: { ...withKey, Origin: 'https://evil.example' },
      body: oneEvent(),
      status: 202,
    },
    {
      name: 'CORS actual, oversize',
      method: 'POST',
      path: '/v1/events',
      headers: { ...withKey, Origin: origin },
      body: '{',
      declaredLength: 1024 * 1024 + 1,
      status: 413,
      error: 'body_too_large',
    },
    {
      name: 'preflight, allowed origin',
      method: 'OPTIONS',
      path: '/v1/events',
      headers: { ...preflight, Origin: origin },
      status: 204,
    },
    {
      name: 'preflight, other origin',
      method: 'OPTIONS',
      path: '/v1/events',
      headers: { ...preflight, Origin: 'https://evil.example' },
      status: 204,
    },
    { name: 'preflight, no origin', method: 'OPTIONS', path: '/v1/events', headers: preflight, status: 204 },
    {
      name: 'preflight on another spelling',
      method: 'OPTIONS',
      path: '/v1/events/',
      headers: { ...preflight, Origin: origin },
      status: 404,
      error: 'not_found',
    },
  ];

  it.each(cases.map((k) => [k.name, k] as const))('%s', async (_name, k) => {
    const { fast, app } = await bothForms(c, k);
    expectSameAnswer(k, fast, app);
    if (k.name.includes('allowed origin')) {
      expect(fast.headers).toContain(`Access-Control-Allow-Origin: ${origin}`);
      expect(fast.headers).toContain('Vary: Origin');
    }
  });
});

describe('POST /v1/events while draining', () => {
  it('both answers close their connection, so keep-alive clients move to another instance', async () => {
    const c = await startInProcess({
      SLUICE_SQLITE_PATH: tempSqlitePath('fast-path-drain'),
      SLUICE_DRAIN_DELAY_MS: '3000',
    });
    const k: Case = {
      name: 'valid',
      method: 'POST',
      path: '/v1/events',
      headers: json,
      body: oneEvent(),
      status: 202,
    };
    const port = Number(new URL(c.url).port);
    try {
      const open = await bothForms({ port }, k);
      expect(open.fast.headers).toContain('Connection: keep-alive');
      const stopped = c.stop();
      const { fast, app } = await bothForms({ port }, k);
      expectSameAnswer(k, fast, app);
      expect(fast.headers).toContain('Connection: close');
      await stopped;
    } finally {
      await c.stop();
    }
  });
});
