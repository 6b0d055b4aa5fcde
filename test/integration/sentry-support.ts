import { execFile } from 'node:child_process';
import path from 'node:path';
import { PYTHON } from '../support/system-tools/required-tools';

const NODE_CLIENT = path.resolve(__dirname, '../../dist/test/support/processes/sentry-client.js');
const PYTHON_CLIENT = path.resolve(__dirname, '../support/processes/sentry-client.py');

/** The DSN of a collector at `baseUrl` for `key` and `project`. */
export function dsnOf(baseUrl: string, key: string, project: number): string {
  const url = new URL(baseUrl);
  return `${url.protocol}//${key}@${url.host}/${project}`;
}

/** What a client process printed as its result. */
export type ClientRun = Record<string, any>;

function run(program: string, args: string[], label: string, timeoutMs: number): Promise<ClientRun> {
  return new Promise((resolve, reject) => {
    execFile(program, args, { timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err) {
        const hint = /Cannot find module/.test(stderr) ? ' (run `npm run build` first)' : '';
        reject(new Error(`${label} failed${hint}: ${err.message}\n${stderr}`));
        return;
      }
      const line = stdout
        .split('\n')
        .find((l) => l.startsWith('{"event": "done"') || l.startsWith('{"event":"done"'));
      if (line === undefined) reject(new Error(`${label} printed no result:\n${stdout}\n${stderr}`));
      else resolve(JSON.parse(line) as ClientRun);
    });
  });
}

/** Runs a scenario of @sentry/node in its own process (test/support/processes/sentry-client.ts). */
export function runNodeSentry(scenario: Record<string, unknown>, timeoutMs = 60_000): Promise<ClientRun> {
  return run(process.execPath, [NODE_CLIENT, JSON.stringify(scenario)], '@sentry/node client', timeoutMs);
}

/** Runs Debian's python3-sentry-sdk (test/support/processes/sentry-client.py). */
export function runPythonSentry(scenario: Record<string, unknown>, timeoutMs = 60_000): Promise<ClientRun> {
  return run(PYTHON, [PYTHON_CLIENT, JSON.stringify(scenario)], 'python3-sentry-sdk client', timeoutMs);
}

/** A Sentry event id (32 hex digits) as Sluice stores it (a UUID). */
export function uuidOf(eventId: string): string {
  const h = eventId.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
