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

/** The setting that chose a listener's port: named when the port cannot be had. */
export interface PortSetting {
  /** Its variable, e.g. `SLUICE_OTLP_PORT`. */
  readonly variable: string;
  /** What `0` does when it turns the listener off (e.g. "turn the OTLP receiver off"); absent when 0 picks a free port. */
  readonly zeroTo?: string;
}

/**
 * Why `port` could not be had, in words that name the setting to change: a port clash is most
 * often another program on a well-known port (an OpenTelemetry Collector on 4318), which the
 * user never chose.
 */
export function listenFailure(
  err: NodeJS.ErrnoException,
  host: string,
  port: number,
  setting: PortSetting,
): Error {
  const where = `port ${port} on ${host}`;
  const elsewhere = `set ${setting.variable} to a free port${
    setting.zeroTo === undefined ? '' : `, or ${setting.variable}=0 to ${setting.zeroTo}`
  }`;
  if (err.code === 'EADDRINUSE')
    return new Error(`${where} is in use by another process: ${elsewhere}`, { cause: err });
  if (err.code === 'EACCES')
    return new Error(`${where} needs privileges this process does not have: ${elsewhere} (above 1023)`, {
      cause: err,
    });
  if (err.code === 'EADDRNOTAVAIL')
    return new Error(
      `${host} is no address of this host: set SLUICE_HOST (default 0.0.0.0, every interface)`,
      {
        cause: err,
      },
    );
  return err;
}

/**
 * Listens on `port` (0 picks a free one) with `o`'s address and socket deadlines; when the port
 * cannot be had, the error names `setting`.
 */
export function listen(
  app: RequestListener,
  o: ListenOptions,
  port: number,
  setting: PortSetting,
): Promise<Listening> {
  const server = createServer({ connectionsCheckingInterval: Math.min(1000, o.headersTimeoutMs / 2) }, app);
  server.keepAliveTimeout = o.keepAliveTimeoutMs;
  server.headersTimeout = o.headersTimeoutMs;
  server.requestTimeout = o.requestTimeoutMs;
  server.on('clientError', answerClientError);
  return new Promise<Listening>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => reject(listenFailure(err, o.host, port, setting));
    server.once('error', failed);
    server.listen(port, o.host, () => {
      server.off('error', failed);
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      const host = o.host === '0.0.0.0' || o.host === '::' ? '127.0.0.1' : o.host;
      resolve({ server, port: bound, url: `http://${host}:${bound}` });
    });
  });
}
