import type { JetStreamClient, JsMsg, QueuedIterator } from 'nats';

/**
 * How much longer than the server's own expiry the client waits before giving up on a pull
 * request (milliseconds): a server that went away mid-request never ends it.
 */
const GUARD_MARGIN_MS = 2000;

async function collect(it: QueuedIterator<JsMsg>, guardMs: number): Promise<JsMsg[]> {
  const out: JsMsg[] = [];
  const guard = setTimeout(() => it.stop(), guardMs);
  try {
    for await (const m of it) out.push(m);
  } finally {
    clearTimeout(guard);
  }
  return out;
}

/**
 * Up to `max` messages of the consumer that are waiting now (`no_wait`): answers as soon as the
 * server has sent what it has, never waits for more. The durable pull consumer hands each
 * message to one worker; several workers pulling share the load.
 *
 * The modern `consumer.fetch()` has no `no_wait` and always waits out its expiry for a partial
 * batch, so this uses the classic pull request, which the 2.x client still supports.
 */
export function fetchWaiting(
  js: JetStreamClient,
  stream: string,
  durable: string,
  max: number,
  timeoutMs: number,
): Promise<JsMsg[]> {
  return collect(js.fetch(stream, durable, { batch: max, no_wait: true }), timeoutMs + GUARD_MARGIN_MS);
}

/** Waits up to `expiresMs` (milliseconds) for one message: the idle worker's long poll. */
export function fetchOne(
  js: JetStreamClient,
  stream: string,
  durable: string,
  expiresMs: number,
): Promise<JsMsg[]> {
  return collect(js.fetch(stream, durable, { batch: 1, expires: expiresMs }), expiresMs + GUARD_MARGIN_MS);
}
