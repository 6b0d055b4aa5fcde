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
  env: 'TEST_PG_URL',
  defaultUrl: 'postgres://postgres@127.0.0.1:5432/postgres',
  image: 'postgres:16-alpine',
  containerPort: 5432,
  containerEnv: { POSTGRES_HOST_AUTH_METHOD: 'trust' },
  urlFor: (host, port) => `postgres://postgres@${host}:${port}/postgres`,
  startHint: 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start',
};

export const REDIS: ServiceSpec = {
  name: 'Redis',
  env: 'TEST_REDIS_URL',
  defaultUrl: 'redis://127.0.0.1:6379',
  image: 'redis:7-alpine',
  containerPort: 6379,
  urlFor: (host, port) => `redis://${host}:${port}`,
  startHint:
    'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
};

export const NATS: ServiceSpec = {
  name: 'NATS (JetStream)',
  env: 'TEST_NATS_URL',
  defaultUrl: 'nats://127.0.0.1:4222',
  image: 'nats:2-alpine',
  containerPort: 4222,
  command: ['-js'],
  urlFor: (host, port) => `nats://${host}:${port}`,
  startHint:
    'start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log',
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
