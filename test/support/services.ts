import net from 'node:net';

/** A service the integration tests need, how to find it, and how to start it here. */
export interface ServiceSpec {
  readonly name: string;
  /** Environment variable that points the tests at it. */
  readonly env: string;
  readonly defaultUrl: string;
  /** Image for the testcontainers fallback, and the port it serves. */
  readonly image: string;
  readonly containerPort: number;
  readonly containerEnv?: Record<string, string>;
  readonly command?: string[];
  /** URL of the container started by the fallback. */
  readonly urlFor: (host: string, port: number) => string;
  readonly startHint: string;
}

export const POSTGRES: ServiceSpec = {
  name: 'PostgreSQL',
  env: 'SLUICE_TEST_PG_URL',
  defaultUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
  image: 'postgres:16-alpine',
  containerPort: 5432,
  containerEnv: { POSTGRES_HOST_AUTH_METHOD: 'trust' },
  urlFor: (host, port) => `postgres://postgres@${host}:${port}/postgres`,
  startHint: 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
};

/** Resolves true when a TCP connection to the URL's host:port opens within `timeoutMs`. */
export function reachable(url: string, timeoutMs = 1500): Promise<boolean> {
  const u = new URL(url);
  const port = Number(u.port || defaultPort(u.protocol));
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

function defaultPort(protocol: string): number {
  if (protocol.startsWith('postgres')) return 5432;
  if (protocol.startsWith('redis')) return 6379;
  if (protocol.startsWith('nats')) return 4222;
  return 80;
}
