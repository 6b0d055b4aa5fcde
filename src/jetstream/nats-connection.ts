import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import type { Logger } from '../log/logger';

export interface NatsConnectOptions {
  readonly servers: readonly string[];
  /** Connection name shown by the server (`sluice-collector`, `sluice-worker`). */
  readonly name: string;
  /** Bound of the first connect and of every request on the connection (milliseconds). */
  readonly timeoutMs: number;
  readonly logger: Logger;
}

/**
 * Interval between client PINGs (milliseconds): a server that stopped answering without closing
 * the socket (frozen, network cut) is noticed after 2–3 s (`PING_INTERVAL_MS × MAX_PINGS_OUT`,
 * plus up to one interval), where the client default would take minutes; the client then moves
 * to another server of the cluster. A PING a second costs each server nothing it would notice.
 */
const PING_INTERVAL_MS = 1000;
const MAX_PINGS_OUT = 2;
/** Delay between reconnect attempts (milliseconds); attempts never stop. */
const RECONNECT_WAIT_MS = 250;

/**
 * Connects once (rejecting after `timeoutMs`), then reconnects forever by itself; each status
 * change is logged once. Callers see "disconnected" through `nc.isClosed()` / status events and
 * answer 503 meanwhile; they never wait on the reconnect.
 */
export async function connectNats(o: NatsConnectOptions): Promise<NatsConnection> {
  const nc = await connect({
    servers: [...o.servers],
    name: o.name,
    timeout: o.timeoutMs,
    reconnect: true,
    maxReconnectAttempts: -1,
    reconnectTimeWait: RECONNECT_WAIT_MS,
    reconnectJitter: 100,
    pingInterval: PING_INTERVAL_MS,
    maxPingOut: MAX_PINGS_OUT,
    waitOnFirstConnect: false,
  });
  const log = o.logger;
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') log.warn({ server: s.server }, 'NATS disconnected');
      else if (s.type === 'reconnect') log.info({ server: s.server }, 'NATS reconnected');
      else if (s.type === 'error') log.warn({ err: s.error }, 'NATS connection error');
    }
  })().catch(() => undefined);
  void nc.closed().then((err: void | Error) => {
    if (err) log.error({ err }, 'NATS connection closed with an error');
  });
  return nc;
}
