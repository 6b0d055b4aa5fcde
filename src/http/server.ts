import { createServer, type Server } from 'node:http';
import type { RequestListener } from 'node:http';

export interface ListenOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Idle keep-alive timeout (milliseconds); above the load balancer's own idle timeout. */
  readonly keepAliveTimeoutMs: number;
}

/**
 * Listens with explicit socket timeouts: a keep-alive connection outlives
 * the load balancer's idle timeout (so the balancer, not us, closes idle
 * connections and never reuses one we just closed), and headers must arrive
 * within the keep-alive timeout plus a second.
 */
export function listen(app: RequestListener, o: ListenOptions): Promise<Server> {
  const server = createServer(app);
  server.keepAliveTimeout = o.keepAliveTimeoutMs;
  server.headersTimeout = o.keepAliveTimeoutMs + 1000;
  server.requestTimeout = 30_000;
  return new Promise<Server>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
