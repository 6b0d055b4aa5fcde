import { createClient, type Client } from '../../../sdk/src/client';
import type { ClientOptions } from '../../../sdk/src/options';
import { FakeClock, FakeTransport } from './fakes';

export interface Harness {
  readonly clock: FakeClock;
  readonly transport: FakeTransport;
  readonly client: Client;
}

/**
 * A client on a fake clock and a fake transport: no aggregation, no gzip,
 * one event per request (so each request is one step of the sampler),
 * sends at once, backoff base 100 ms, `random` 0.5. Problems go to a silent
 * `onError` (pass `onError: undefined` for the console defaults).
 */
export function harness(options: Partial<ClientOptions> = {}, clock = new FakeClock()): Harness {
  const transport = new FakeTransport(clock);
  const client = createClient({
    endpoint: 'http://collector.test/v1/events',
    app: 'shop',
    aggregation: false,
    gzip: false,
    batchSize: 1,
    flushIntervalMs: 0,
    retry: { baseMs: 100, maxMs: 1000 },
    random: () => 0.5,
    pageHooks: false,
    clock,
    transport,
    onError: () => {},
    ...options,
  });
  return { clock, transport, client };
}

/** Records unhandled rejections while a test runs; `expect(…).toEqual([])` at its end. */
export function watchUnhandledRejections(): unknown[] {
  const seen: unknown[] = [];
  const listener = (reason: unknown): void => {
    seen.push(reason);
  };
  beforeEach(() => {
    seen.length = 0;
    process.on('unhandledRejection', listener);
  });
  afterEach(() => {
    process.off('unhandledRejection', listener);
  });
  return seen;
}
