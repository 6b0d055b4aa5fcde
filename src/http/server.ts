import { createServer, type Server } from 'node:http';
import type { RequestListener } from 'node:http';

export interface ListenOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Idle keep-alive timeout (milliseconds); above the load balancer's own idle timeout. */
  readonly keepAliveTimeoutMs: number;
  /** Longest wait for a request's headers (milliseconds); at most `requestTimeoutMs`. */
  readonly headersTimeoutMs: number;
  /** Longest wait for a whole request, headers and body (milliseconds). */
  readonly requestTimeoutMs: number;
}

/**
 * Listens with explicit socket timeouts: a keep-alive connection outlives the load balancer's
 * idle timeout (so the balancer, not us, closes idle connections and never reuses one we just
 * closed); a client that trickles its headers or body gets 408 once its deadline passes, checked
 * every second (Node's default check runs every 30 s, which stretched a 30 s deadline to 60).
 */
export function listen(app: RequestListener, o: ListenOptions): Promise<Server> {
  const server = createServer({ connectionsCheckingInterval: Math.min(1000, o.headersTimeoutMs / 2) }, app);
  server.keepAliveTimeout = o.keepAliveTimeoutMs;
  server.headersTimeout = o.headersTimeoutMs;
  server.requestTimeout = o.requestTimeoutMs;
  return new Promise<Server>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
