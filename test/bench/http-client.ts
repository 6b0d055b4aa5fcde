import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';

/** What the load generators need from one `POST` answer. */
export interface PostAnswer {
  readonly status: number;
  /** `accepted` of a 202 or 429 body (events taken); 0 for any other answer. */
  readonly accepted: number;
}

/** A keep-alive HTTP client bound to one origin (always 127.0.0.1 here). */
export interface HttpClient {
  readonly kind: 'undici' | 'node:http';
  /** POSTs a JSON body; rejects only on a transport failure (reset, refused, timeout). */
  post(path: string, body: Buffer): Promise<PostAnswer>;
  close(): Promise<void>;
}

/** Idle keep-alive and per-request timeouts of the client (milliseconds). */
const TIMEOUT_MS = 30_000;
const HEADERS = { 'content-type': 'application/json' };

function acceptedOf(status: number, text: string): number {
  if (status !== 202 && status !== 429) return 0;
  try {
    const n = (JSON.parse(text) as { accepted?: unknown }).accepted;
    return typeof n === 'number' ? n : 0;
  } catch {
    return 0;
  }
}

/** The few parts of undici's API used here, so that compiling does not depend on it being installed. */
interface UndiciPool {
  request(o: {
    path: string;
    method: 'POST';
    headers: Record<string, string>;
    body: Buffer;
  }): Promise<{ statusCode: number; body: { text(): Promise<string> } }>;
  close(): Promise<void>;
}
interface UndiciModule {
  Pool: new (
    origin: string,
    o: {
      connections: number;
      pipelining: number;
      keepAliveTimeout: number;
      headersTimeout: number;
      bodyTimeout: number;
    },
  ) => UndiciPool;
}

/**
 * undici when node_modules has it (a transitive dev dependency; it costs the load generator far
 * less CPU per request than node:http, which matters when it shares two cores with the server and
 * PostgreSQL). Never installed by the bench.
 */
function loadUndici(): UndiciModule | null {
  try {
    const mod = createRequire(__filename)('undici') as Partial<UndiciModule>;
    return typeof mod.Pool === 'function' ? (mod as UndiciModule) : null;
  } catch {
    return null;
  }
}

function undiciClient(undici: UndiciModule, origin: string, connections: number): HttpClient {
  const pool = new undici.Pool(origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: TIMEOUT_MS,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });
  return {
    kind: 'undici',
    async post(path, body) {
      const res = await pool.request({ path, method: 'POST', headers: HEADERS, body });
      const text = await res.body.text();
      return { status: res.statusCode, accepted: acceptedOf(res.statusCode, text) };
    },
    close: () => pool.close(),
  };
}

function nodeHttpClient(origin: string, connections: number): HttpClient {
  const url = new URL(origin);
  const agent = new Agent({ keepAlive: true, maxSockets: connections, keepAliveMsecs: TIMEOUT_MS });
  return {
    kind: 'node:http',
    post(path, body) {
      return new Promise<PostAnswer>((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path,
            method: 'POST',
            agent,
            timeout: TIMEOUT_MS,
            headers: { ...HEADERS, 'content-length': String(body.length) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const status = res.statusCode ?? 0;
              resolve({ status, accepted: acceptedOf(status, Buffer.concat(chunks).toString('utf8')) });
            });
            res.on('error', reject);
          },
        );
        req.on('timeout', () => req.destroy(new Error('request timed out')));
        req.on('error', reject);
        req.end(body);
      });
    },
    close: async () => agent.destroy(),
  };
}

/** Which client `createHttpClient` builds on this install. */
export function httpClientKind(): HttpClient['kind'] {
  return loadUndici() ? 'undici' : 'node:http';
}

/** A client with `connections` keep-alive connections to `origin`. */
export function createHttpClient(origin: string, connections: number): HttpClient {
  const undici = loadUndici();
  return undici ? undiciClient(undici, origin, connections) : nodeHttpClient(origin, connections);
}
