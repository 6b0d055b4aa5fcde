import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { freePort } from '../../src/dev-cluster/free-port';
import { log } from '../support/events';
import { postEvents, waitFor } from '../support/http';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { processAlive } from '../support/process-alive';

const CLI = path.resolve(__dirname, '../../dist/src/cli.js');

interface RunnerProcess {
  readonly child: ChildProcess;
  readonly stdout: string[];
  readonly stderr: string[];
  readonly exited: Promise<number | null>;
}

function runCluster(args: string[], env: Record<string, string>): RunnerProcess {
  const child = spawn(process.execPath, [CLI, 'cluster', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout?.setEncoding('utf8').on('data', (c: string) => stdout.push(...c.split('\n').filter(Boolean)));
  child.stderr?.setEncoding('utf8').on('data', (c: string) => stderr.push(...c.split('\n').filter(Boolean)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout, stderr, exited };
}

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('cli');
});

afterAll(async () => {
  await db?.drop();
});

describe('sluice cluster', () => {
  it('prints the URL, serves through HAProxy, and on SIGTERM stops every process it started (exit 0)', async () => {
    const port = await freePort();
    const statsPort = await freePort();
    const runner = runCluster(
      [
        ...['--collectors', '2', '--port', String(port), '--stats-port', String(statsPort)],
        ...['--otlp-port', String(await freePort()), '--exporter-port', String(await freePort())],
      ],
      {
        SLUICE_DATABASE_URL: db.url,
        SLUICE_LOG_LEVEL: 'warn',
        SLUICE_RATE_LIMIT: '0',
        SLUICE_STATS_USER: 'ops',
        SLUICE_STATS_PASSWORD: 'cli-secret',
      },
    );
    try {
      await waitFor(
        'the runner to print its addresses',
        () => {
          if (runner.child.exitCode !== null) throw new Error(`runner exited: ${runner.stderr.join('\n')}`);
          return runner.stdout.some((l) => l.includes('Ctrl-C'));
        },
        60_000,
      );
      expect(runner.stdout[0]).toBe(`Sluice cluster ready: http://127.0.0.1:${port}`);
      const pids = runner.stdout.flatMap((l) => [...l.matchAll(/pid (\d+)/g)].map((m) => Number(m[1])));
      expect(pids).toHaveLength(3); // two collectors and HAProxy
      for (const pid of pids) expect(processAlive(pid)).toBe(true);

      // The stats page takes the credentials from the environment, and only those.
      const stats = (user: string, password: string) =>
        fetch(`http://127.0.0.1:${statsPort}/stats`, {
          headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
        }).then((r) => r.status);
      expect({ set: await stats('ops', 'cli-secret'), default: await stats('admin', 'admin') }).toEqual({
        set: 200,
        default: 401,
      });

      const served = new Set<string>();
      for (let i = 0; i < 4; i++) {
        const answer = await postEvents(`http://127.0.0.1:${port}`, [log('cli-test')]);
        expect(answer.status).toBe(202);
        served.add(answer.headers.get('x-served-by') ?? '');
      }
      expect([...served].sort()).toEqual(['collector1', 'collector2']);

      runner.child.kill('SIGTERM');
      expect(await runner.exited).toBe(0);
      for (const pid of pids) expect({ pid, alive: processAlive(pid) }).toEqual({ pid, alive: false });
      expect(runner.stderr.filter((l) => /^sluice cluster: collector\d code 0$/.test(l))).toHaveLength(2);
    } finally {
      if (runner.child.exitCode === null) runner.child.kill('SIGKILL');
    }
  }, 90_000);

  it('refuses a drain delay shorter than HAProxy’s check window, before starting anything', async () => {
    const runner = runCluster(['--port', '0', '--stats-port', '0'], {
      SLUICE_DATABASE_URL: db.url,
      SLUICE_DRAIN_DELAY_MS: '100',
    });
    expect(await runner.exited).toBe(1);
    expect(runner.stderr.join('\n')).toMatch(
      /SLUICE_DRAIN_DELAY_MS=100 is shorter than HAProxy's detection window/,
    );
  }, 30_000);

  it('refuses an unknown flag and a bad collector setting', async () => {
    const flag = runCluster(['--replicas', '3'], { SLUICE_DATABASE_URL: db.url });
    expect(await flag.exited).toBe(1);
    expect(flag.stderr.join('\n')).toMatch(/unknown option --replicas/);

    const setting = runCluster(['--port', '0', '--stats-port', '0'], {
      SLUICE_DATABASE_URL: db.url,
      SLUICE_ACK: 'sometimes',
    });
    expect(await setting.exited).toBe(1);
    expect(setting.stderr.join('\n')).toMatch(/invalid collector configuration: SLUICE_ACK="sometimes"/);
  }, 30_000);

  it('names the flag of a port another process holds, before starting anything', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const taken = (holder.address() as net.AddressInfo).port;
    try {
      const runner = runCluster(['--port', String(taken), '--stats-port', '0'], {
        SLUICE_DATABASE_URL: db.url,
      });
      expect(await runner.exited).toBe(1);
      const said = runner.stderr.join('\n');
      expect(said).toContain(`port ${taken} for the API (--port) is already in use`);
      expect(said).not.toMatch(/stats page: haproxy exited/);
    } finally {
      holder.close();
    }
  }, 30_000);
});
