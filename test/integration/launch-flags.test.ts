/**
 * Every way a user starts a collector runs it with the memory flags of
 * src/runtime/memory-flags.ts: the `sluice` bin (its `#!/usr/bin/env node` line runs
 * `node dist/src/cli.js`), `npm start`'s command, and the Docker image's NODE_OPTIONS and ENTRYPOINT. Checked from
 * outside: the heap limit the collector reports on /metrics and the processes' command lines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../src/dev-cluster/free-port';
import { expectedHeapLimitBytes, memoryFlagArgs, MAX_SEMI_SPACE } from '../../src/runtime/memory-flags';
import { waitFor } from '../support/http';
import { tempSqlitePath } from '../support/postgres';
import { processAlive } from '../support/process-alive';

const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'dist/src/cli.js');

interface Launched {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly output: string[];
}

const running: Launched[] = [];

afterEach(async () => {
  for (const l of running.splice(0)) {
    if (l.child.exitCode === null && l.child.signalCode === null) l.child.kill('SIGKILL');
    await l.exited;
  }
});

async function launch(command: string, args: string[], env: Record<string, string> = {}): Promise<Launched> {
  const port = await freePort();
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      SLUICE_HOST: '127.0.0.1',
      SLUICE_PORT: String(port),
      SLUICE_OTLP_PORT: '0',
      SLUICE_DRAIN_DELAY_MS: '0',
      SLUICE_LOG_LEVEL: 'warn',
      SLUICE_SQLITE_PATH: tempSqlitePath('launch'),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  for (const s of [child.stdout, child.stderr])
    s?.setEncoding('utf8').on('data', (c: string) => output.push(c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const l: Launched = { child, url: `http://127.0.0.1:${port}`, exited, output };
  running.push(l);
  await waitFor(
    `collector on port ${port} to be ready`,
    async () => {
      if (child.exitCode !== null) throw new Error(`exited early:\n${output.join('')}`);
      return (await fetch(`${l.url}/readyz`).catch(() => null))?.status === 200;
    },
    20_000,
  );
  return l;
}

async function heapLimitBytes(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^sluice_heap_limit_bytes (\d+)$/m.exec(text);
  if (!m) throw new Error('no sluice_heap_limit_bytes on /metrics');
  return Number(m[1]);
}

function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

/** Pids whose parent is `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4 (ppid), after the command name in parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('the memory flags in every launch path', () => {
  it('the sluice bin without flags relaunches the collector once with them; SIGTERM still drains it', async () => {
    const l = await launch(process.execPath, [CLI, 'serve']);
    expect(await heapLimitBytes(l.url)).toBe(expectedHeapLimitBytes());
    const [collector, ...others] = childrenOf(l.child.pid as number);
    expect(others).toEqual([]);
    expect(commandLine(collector as number)).toEqual([process.execPath, ...memoryFlagArgs(), CLI, 'serve']);
    expect(childrenOf(collector as number)).toEqual([]);

    l.child.kill('SIGTERM');
    expect(await l.exited).toEqual({ code: 0, signal: null });
    await waitFor('the collector to be gone', () => !processAlive(collector as number), 10_000);
  });

  it('npm start runs the collector itself, with the flags on its command line', async () => {
    const start = (
      JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
        scripts: { start: string };
      }
    ).scripts.start;
    // The script starts with exec: the shell npm runs it in becomes the collector.
    const l = await launch('/bin/sh', ['-c', start]);
    expect(await heapLimitBytes(l.url)).toBe(expectedHeapLimitBytes());
    expect(commandLine(l.child.pid as number)).toEqual([
      'node',
      ...memoryFlagArgs(),
      'dist/src/cli.js',
      'serve',
    ]);
    expect(childrenOf(l.child.pid as number)).toEqual([]);
  });

  it('the Docker image: its NODE_OPTIONS and ENTRYPOINT run the collector itself with the flags', async () => {
    const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const nodeOptions = /NODE_OPTIONS="([^"]*)"/.exec(dockerfile)?.[1];
    expect(nodeOptions).toBeDefined();
    const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
    const [node, ...args] = JSON.parse(entrypoint ?? '[]') as string[];
    expect(node).toBe('node');
    expect(args.pop()).toBe('dist/src/cli.js');
    const l = await launch(process.execPath, [...args, CLI, 'serve'], {
      NODE_OPTIONS: nodeOptions as string,
    });
    expect(await heapLimitBytes(l.url)).toBe(expectedHeapLimitBytes());
    expect(childrenOf(l.child.pid as number)).toEqual([]);
  });

  it('keeps a value the user set in NODE_OPTIONS and adds only the missing flags', async () => {
    const l = await launch(process.execPath, [CLI, 'serve'], { NODE_OPTIONS: '--max-old-space-size=300' });
    expect(await heapLimitBytes(l.url)).toBe(expectedHeapLimitBytes(300, MAX_SEMI_SPACE.mib));
  });

  it('the relaunched collector does not outlive its parent killed with SIGKILL', async () => {
    const l = await launch(process.execPath, [CLI, 'serve']);
    const [collector] = childrenOf(l.child.pid as number);
    expect(collector).toBeDefined();
    l.child.kill('SIGKILL');
    await l.exited;
    await waitFor('the collector to be gone', () => !processAlive(collector as number), 10_000);
  });
});
