import { createInbox, nanos, type Msg, type NatsConnection } from '@nats-io/nats-core';
import { parseDeliveryInfo, PulledMessage } from './pulled-message';

/**
 * How much longer than the server's own expiry the client waits before giving up on a pull
 * request (milliseconds): a server that went away mid-request never ends it.
 */
const GUARD_MARGIN_MS = 2000;

interface PullRequest {
  readonly batch: number;
  readonly no_wait?: true;
  /** Nanoseconds. */
  readonly expires?: number;
}

/**
 * One pull request to a durable consumer (`$JS.API.CONSUMER.MSG.NEXT.<stream>.<durable>`): the
 * messages arrive on a reply inbox until the batch is full or the server ends the request with a
 * status (404 no messages, 408 expired, 409 e.g. consumer deleted). Rejects when nothing serves
 * the consumer (503 no responders: JetStream or the stream is away).
 */
function pull(
  nc: Pick<NatsConnection, 'publish' | 'subscribe'>,
  stream: string,
  durable: string,
  request: PullRequest,
  guardMs: number,
): Promise<PulledMessage[]> {
  return new Promise<PulledMessage[]>((resolve, reject) => {
    const out: PulledMessage[] = [];
    const inbox = createInbox();
    let open = true;
    const end = (err: Error | null): void => {
      if (!open) return;
      open = false;
      clearTimeout(guard);
      sub.unsubscribe();
      if (err) reject(err);
      else resolve(out);
    };
    const sub = nc.subscribe(inbox, {
      callback: (err: Error | null, m: Msg) => {
        if (err) return end(err);
        const info = m.reply ? parseDeliveryInfo(m.reply) : null;
        if (info === null) {
          const code = m.headers?.code ?? 0;
          if (code === 503) return end(new Error(`no responders for the consumer ${stream}/${durable}`));
          if (code === 100) return; // heartbeat
          return end(null);
        }
        out.push(new PulledMessage(m, info));
        if (out.length >= request.batch) end(null);
      },
    });
    const guard = setTimeout(() => end(null), guardMs);
    try {
      nc.publish(`$JS.API.CONSUMER.MSG.NEXT.${stream}.${durable}`, JSON.stringify(request), {
        reply: inbox,
      });
    } catch (err) {
      end(err instanceof Error ? err : new Error(String(err)));
    }
  });
}

/**
 * Up to `max` messages of the consumer that are waiting now (`no_wait`): answers as soon as the
 * server has sent what it has, never waits for more. The durable pull consumer hands each
 * message to one worker; several workers pulling share the load. (The client's
 * `consumer.fetch()` has no `no_wait` and waits out its expiry for a partial batch.)
 */
export function fetchWaiting(
  nc: Pick<NatsConnection, 'publish' | 'subscribe'>,
  stream: string,
  durable: string,
  max: number,
  timeoutMs: number,
): Promise<PulledMessage[]> {
  return pull(nc, stream, durable, { batch: max, no_wait: true }, timeoutMs + GUARD_MARGIN_MS);
}

/** Waits up to `expiresMs` (milliseconds) for one message: the idle worker's long poll. */
export function fetchOne(
  nc: Pick<NatsConnection, 'publish' | 'subscribe'>,
  stream: string,
  durable: string,
  expiresMs: number,
): Promise<PulledMessage[]> {
  return pull(nc, stream, durable, { batch: 1, expires: nanos(expiresMs) }, expiresMs + GUARD_MARGIN_MS);
}
