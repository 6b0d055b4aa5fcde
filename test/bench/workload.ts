import { uuidV7 } from './uuid-v7';

/** An event as an SDK sends it (docs/ARCHITECTURE.md, wire contract v1). */
export interface WireEvent {
  readonly id: string;
  readonly type: 'metric' | 'lifecycle' | 'log' | 'error';
  readonly name: string;
  readonly ts: number;
  readonly source: { readonly app: string; readonly version: string; readonly env: string };
  readonly value?: number;
  readonly message?: string;
  readonly error?: { readonly message: string; readonly kind: string; readonly stack: string };
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
}

/** One pre-built `POST /v1/events` body. */
export interface RequestBody {
  readonly bytes: Buffer;
  readonly events: number;
}

const APPS = ['web-shop', 'checkout-api', 'ios-app', 'android-app', 'search', 'billing'];
const VERSIONS = ['1.4.2', '1.4.3', '2.0.0-rc.1', '3.11.0'];
const ROUTES = ['/checkout', '/cart', '/product/:id', '/search', '/account', '/'];
const METRICS = [
  'http.server.duration',
  'render.frame_drop',
  'db.pool.wait',
  'cache.hit_ratio',
  'queue.depth',
];
const REGIONS = ['eu-west-1', 'us-east-1', 'ap-south-1'];
const LIFECYCLE = ['app.lifecycle.foreground', 'app.lifecycle.background', 'session.start', 'session.end'];
const LOGS = ['auth.signed_in', 'cart.item_added', 'payment.retry', 'sync.completed'];
const ERRORS: ReadonlyArray<readonly [string, string]> = [
  ['checkout.failed', 'PaymentError'],
  ['api.timeout', 'TimeoutError'],
  ['render.crash', 'TypeError'],
];

/** A small deterministic PRNG (mulberry32): the same seed gives the same mix of events. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(items: readonly T[], r: number): T {
  return items[Math.floor(r * items.length) % items.length] as T;
}

/**
 * Realistic events, about 300 bytes of JSON each: 70% metric samples, 10% lifecycle, 10% logs,
 * 10% errors. Ids are UUID v7 and unique; `ts` is the current time minus up to a second.
 */
export class EventGenerator {
  private readonly random: () => number;
  private sequence = 0;

  constructor(seed = 1) {
    this.random = seededRandom(seed);
  }

  next(nowMs: number = Date.now()): WireEvent {
    const r = this.random;
    const ts = nowMs - Math.floor(r() * 1000);
    const source = {
      app: pick(APPS, r()),
      version: pick(VERSIONS, r()),
      env: r() < 0.8 ? 'prod' : 'staging',
    };
    const id = uuidV7(ts);
    const kind = r();
    const seq = this.sequence++;
    if (kind < 0.7) {
      return {
        id,
        type: 'metric',
        name: pick(METRICS, r()),
        ts,
        source,
        value: Math.round(r() * 250_000) / 100,
        attributes: {
          route: pick(ROUTES, r()),
          method: r() < 0.7 ? 'GET' : 'POST',
          status: r() < 0.95 ? 200 : 503,
          region: pick(REGIONS, r()),
          host: `web-${Math.floor(r() * 40)}`,
        },
      };
    }
    if (kind < 0.8) {
      return {
        id,
        type: 'lifecycle',
        name: pick(LIFECYCLE, r()),
        ts,
        source,
        attributes: {
          session: `s-${(seq * 2654435761) >>> 0}`,
          from: 'background',
          to: 'foreground',
          cold: r() < 0.1,
        },
      };
    }
    if (kind < 0.9) {
      return {
        id,
        type: 'log',
        name: pick(LOGS, r()),
        ts,
        source,
        message: `user ${Math.floor(r() * 1e6)} completed step ${Math.floor(r() * 9)} in ${Math.floor(r() * 900)} ms`,
        attributes: { level: 'info', logger: 'app.flow', route: pick(ROUTES, r()) },
      };
    }
    const [name, errorKind] = pick(ERRORS, r());
    return {
      id,
      type: 'error',
      name,
      ts,
      source,
      error: {
        message: `${errorKind}: request ${Math.floor(r() * 1e6)} failed`,
        kind: errorKind,
        stack: `${errorKind}\n    at submit (app.js:120:7)\n    at onClick (ui.js:44:3)`,
      },
      attributes: { route: pick(ROUTES, r()), retry: Math.floor(r() * 3) },
    };
  }

  /** `count` events, each a fresh id. */
  take(count: number, nowMs: number = Date.now()): WireEvent[] {
    const out: WireEvent[] = [];
    for (let i = 0; i < count; i++) out.push(this.next(nowMs));
    return out;
  }
}

/**
 * Request bodies of `perRequest` events each, built ahead of a measured window so that generating
 * them costs nothing inside it. Grows on demand (`ensure`), between windows only.
 */
export class BodyCorpus {
  private readonly list: RequestBody[] = [];
  private eventTotal = 0;
  private byteTotal = 0;

  constructor(
    private readonly generator: EventGenerator,
    /** Events per body. */
    readonly perRequest: number,
  ) {}

  get bodies(): readonly RequestBody[] {
    return this.list;
  }

  /** Mean JSON size of one event in the bodies (bytes, envelope included). */
  get bytesPerEvent(): number {
    return this.eventTotal === 0 ? 0 : this.byteTotal / this.eventTotal;
  }

  /** Builds bodies until the corpus holds at least `events` events. Fresh timestamps. */
  ensure(events: number): this {
    const now = Date.now();
    while (this.eventTotal < events) {
      const bytes = Buffer.from(JSON.stringify({ events: this.generator.take(this.perRequest, now) }));
      this.list.push({ bytes, events: this.perRequest });
      this.eventTotal += this.perRequest;
      this.byteTotal += bytes.length;
    }
    return this;
  }
}
