import type { TelemetryEvent } from '../../src/events/types';
import { attrs, telemetryEvent } from './telemetry-events';

/** Kinds and messages of the generated errors: numbers vary, so each kind is one fingerprint group. */
const ERRORS: ReadonlyArray<readonly [string, (n: number) => string]> = [
  ['PaymentError', (n) => `card ${4000 + n} declined`],
  ['NotFound', (n) => `order ${n * 7} not found`],
  ['TypeError', () => "Cannot read properties of undefined (reading 'total')"],
];

/** A deterministic stream of numbers in [0, 1) (so a run can be replayed). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * An hour of an app's telemetry before `now`, one event every `stepMs`: metric samples
 * (`http.latency_ms`), SDK summaries (`render.frame_drop_summary`), logs, lifecycle events and
 * errors of three kinds, in prod and staging, versions 1.4.2 and 1.5.0, routes /cart and /checkout.
 */
export function appHour(app: string, now: number, stepMs = 20_000, seed = 1): TelemetryEvent[] {
  const rnd = random(seed);
  const out: TelemetryEvent[] = [];
  for (let i = 0, ts = now - 3_600_000; ts < now; i++, ts += stepMs) {
    const route = i % 2 === 0 ? '/cart' : '/checkout';
    const common = {
      app,
      ts,
      env: rnd() < 0.8 ? 'prod' : 'staging',
      version: rnd() < 0.5 ? '1.4.2' : '1.5.0',
      attributes: attrs({ route }),
    };
    switch (i % 6) {
      case 0:
      case 3:
        out.push(
          telemetryEvent('metric', {
            ...common,
            name: 'http.latency_ms',
            value: Math.round(40 + 30 * Math.sin(i / 15) + rnd() * 10),
          }),
        );
        break;
      case 1: {
        const count = 5 + (i % 7);
        const min = i % 3;
        const max = min + 10 + (i % 5);
        const sum = count * min + (max - min) * 3;
        out.push(
          telemetryEvent('metric', {
            ...common,
            name: 'render.frame_drop_summary',
            value: null,
            summary: { count, min, max, sum, avg: sum / count },
          }),
        );
        break;
      }
      case 2: {
        const [kind, message] = ERRORS[Math.floor(i / 6) % ERRORS.length] as (typeof ERRORS)[number];
        out.push(
          telemetryEvent('error', {
            ...common,
            name: 'checkout.failed',
            error: {
              kind,
              message: message(i),
              stack: `${kind}: ${message(i)}\n    at pay (checkout.js:42:13)\n    at submit (form.js:7:5)`,
            },
            attributes: attrs({ route: '/checkout', status: 500 }),
          }),
        );
        break;
      }
      case 4:
        out.push(
          telemetryEvent('log', { ...common, name: 'cart.updated', message: `cart has ${i % 9} items` }),
        );
        break;
      default:
        out.push(
          telemetryEvent('lifecycle', { ...common, name: i % 12 === 5 ? 'app.start' : 'app.background' }),
        );
    }
  }
  return out;
}
