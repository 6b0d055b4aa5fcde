import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { freePort } from './collector-process';
import { reachable } from './services';
import { waitFor } from './http';

export function redisUrl(): string {
  return process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
}

/** A key prefix of this test run alone, so parallel runs never share counters. */
export function uniquePrefix(label: string): string {
  return `sluice-test:${label}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** A private redis-server (for tests that stop or freeze it), on a free loopback port. */
export async function startPrivateRedis(): Promise<{
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const spawnError = new Promise<never>((_, reject) =>
    child.once('error', (err) =>
      reject(new Error(`cannot start redis-server (${err.message}); apt-get install -y redis-server`)),
    ),
  );
  const url = `redis://127.0.0.1:${port}`;
  await Promise.race([waitFor(`redis-server on ${port}`, () => reachable(url, 200), 10_000), spawnError]);
  return {
    url,
    child,
    async stop() {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    },
  };
}
