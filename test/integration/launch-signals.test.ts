/**
 * Every way a user starts a collector stops cleanly when a supervisor signals the process it
 * started: SIGTERM (or SIGINT) to that top process drains the collector (every acknowledged event
 * stored), ends the top process, and frees the port. `npm start` used to leave the collector
 * running on the port, undrained, when npm got SIGTERM. `sluice cluster` is checked by
 * test/cluster/cli.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { freePort } from '../../src/dev-cluster/free-port';
import { log } from '../support/events';
import { acknowledgedIds, postEvents, waitFor } from '../support/http';
import { tempSqlitePath } from '../support/postgres';
import { CLI } from '../support/run-cli';

const ROOT = path.resolve(__dirname, '../..');

interface Launched {
  readonly top: ChildProcess;
  readonly output: string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running: Launched[] = [];
/** Kills what a failed test left: the top process and any collector it started (pids from its log). */
afterEach(() => {
  for (const l of running.splice(0)) {
    if (l.top.exitCode === null && l.top.signalCode === null) l.top.kill('SIGKILL');
    for (const m of l.output.join('').matchAll(/"pid":(\d+)/g)) {
      try {
        process.kill(Number(m[1]), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
});

function launch(command: string, args: string[], env: Record<string, string>): Launched {
  const top = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SLUICE_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  for (const s of [top.stdout, top.stderr]) s?.setEncoding('utf8').on('data', (c: string) => output.push(c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    top.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const l = { top, output, exited };
  running.push(l);
  return l;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** The npx cache of this file: `npx sluice` links the repo into it (scripts skipped: dist is built). */
const npxCache = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-t-npx-'));
afterAll(() => fs.rmSync(npxCache, { recursive: true, force: true }));

const PATHS: Array<[string, string, string[], NodeJS.Signals]> = [
  // The start script as npm runs it; --ignore-scripts skips only the prestart build.
  ['npm start', 'npm', ['start', '--ignore-scripts'], 'SIGTERM'],
  [
    'npx sluice serve',
    'npx',
    ['--yes', '--ignore-scripts', '--cache', npxCache, 'sluice', 'serve'],
    'SIGTERM',
  ],
  // No memory flags: the bin relaunches itself under a parent that forwards signals.
  ['node dist/src/cli.js serve (relaunched)', process.execPath, [CLI, 'serve'], 'SIGTERM'],
  ['node dist/src/cli.js serve (relaunched), Ctrl-C', process.execPath, [CLI, 'serve'], 'SIGINT'],
];

describe.each(PATHS)('%s', (_label, command, args, signal) => {
  it(`drains on ${signal} to its top process, ends it, and frees the port`, async () => {
    const port = await freePort();
    const sqlite = tempSqlitePath('launch_signals');
    const l = launch(command, args, {
      SLUICE_PORT: String(port),
      SLUICE_OTLP_PORT: '0',
      SLUICE_SQLITE_PATH: sqlite,
    });
    const url = `http://127.0.0.1:${port}`;
    await waitFor(
      'the collector to be ready',
      async () => {
        if (l.top.exitCode !== null) throw new Error(`exited early:\n${l.output.join('')}`);
        return (await fetch(`${url}/readyz`).catch(() => null))?.status === 200;
      },
      30_000,
    );
    const batch = Array.from({ length: 50 }, () => log('launch'));
    const answer = await postEvents(url, batch);
    const acknowledged = acknowledgedIds(batch, answer);
    expect(acknowledged.length).toBe(50);

    l.top.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      l.exited,
      new Promise((resolve) => (timer = setTimeout(() => resolve('still running'), 20_000))),
    ]);
    clearTimeout(timer);
    expect(ended).not.toBe('still running');
    // npm exec ends when its shell does, before the collector it started has drained.
    await waitFor('the collector to drain', () => /shutdown complete/.test(l.output.join('')), 15_000);
    await waitFor('the port to be free', () => portFree(port), 10_000);

    const db = new Database(sqlite, { readonly: true });
    try {
      const stored = new Set(
        (db.prepare("SELECT id FROM events WHERE app = 'launch'").all() as Array<{ id: string }>).map(
          (r) => r.id,
        ),
      );
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    } finally {
      db.close();
      fs.rmSync(path.dirname(sqlite), { recursive: true, force: true });
    }
  });
});
