import { createServer, type Server } from 'node:http';
import type { RequestListener } from 'node:http';
import { answerClientError } from './client-error';

export interface ListenOptions {
  readonly host: string;
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
/** A listening server, the port it got and a URL that reaches it from this host. */
export interface Listening {
  readonly server: Server;
  readonly port: number;
  /** `http://host:port`, with a wildcard host (`0.0.0.0`, `::`) given as 127.0.0.1. */
  readonly url: string;
}

/** Listens on `port` (0 picks a free one) with `o`'s address and socket deadlines. */
export function listen(app: RequestListener, o: ListenOptions, port: number): Promise<Listening> {
  const server = createServer({ connectionsCheckingInterval: Math.min(1000, o.headersTimeoutMs / 2) }, app);
  server.keepAliveTimeout = o.keepAliveTimeoutMs;
  server.headersTimeout = o.headersTimeoutMs;
  server.requestTimeout = o.requestTimeoutMs;
  server.on('clientError', answerClientError);
  return new Promise<Listening>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, o.host, () => {
      server.off('error', reject);
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      const host = o.host === '0.0.0.0' || o.host === '::' ? '127.0.0.1' : o.host;
      resolve({ server, port: bound, url: `http://${host}:${bound}` });
    });
  });
}
