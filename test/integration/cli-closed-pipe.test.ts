/**
 * The read commands piped into `head`, as a user types them in a shell, against a real collector
 * with its defaults: when `head` has what it wants and goes away, `sluice query` and `sluice tail`
 * end quietly with status 0, as Unix tools do (no `EPIPE` stack).
 */
import { spawn } from 'node:child_process';
import { freePort } from '../../src/dev-cluster/free-port';
import { log, type WireEvent } from '../support/events';
import { getJson, postEvents, waitFor } from '../support/http';
import { tempSqlitePath } from '../support/postgres';
import { CLI } from '../support/run-cli';
import { spawnSluice, waitUntilReady, type SluiceProcess } from '../support/sluice-process';

/** A shell pipeline `sluice <args> | head -<lines>`: head's output, the stderr and sluice's status. */
function pipedIntoHead(args: readonly string[], lines: number) {
  const quoted = [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(' ');
  const shell = spawn('bash', ['-c', `${quoted} | head -${lines}; echo "status \${PIPESTATUS[0]}" >&2`], {
    env: { PATH: process.env.PATH ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run = { stdout: '', stderr: '', ended: false };
  shell.stdout.setEncoding('utf8').on('data', (c: string) => (run.stdout += c));
  shell.stderr.setEncoding('utf8').on('data', (c: string) => (run.stderr += c));
  const exited = new Promise<void>((resolve) =>
    shell.once('close', () => {
      run.ended = true;
      resolve();
    }),
  );
  return { run, exited, kill: () => shell.kill('SIGKILL') };
}

describe('sluice query and tail piped into head', () => {
  let collector: SluiceProcess;
  let url: string;
  const app = 'piped';

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    collector = spawnSluice('serve', {
      SLUICE_SQLITE_PATH: tempSqlitePath('cli_pipe'),
      SLUICE_PORT: String(port),
      SLUICE_OTLP_PORT: '0',
      SLUICE_DRAIN_DELAY_MS: '0',
    });
    await waitUntilReady(collector, 'collector', url, 20_000);
    // More than a pipe holds (64 KiB) as a table, within the default rate limit's burst.
    const events = Array.from({ length: 900 }, (_, i) =>
      log(app, { ts: Date.now() - 60_000 + i, message: `line ${i} ${'x'.repeat(200)}` }),
    );
    expect((await postEvents(url, events)).status).toBe(202);
    await waitFor(
      'the events to be stored',
      async () => (await getJson(`${url}/v1/events?app=${app}&limit=1000`)).body.events.length === 900,
    );
  });

  afterAll(async () => {
    await collector?.stop();
  });

  it('sluice query … --all | head -2 ends with status 0 and says nothing', async () => {
    const p = pipedIntoHead(['query', 'events', '--app', app, '--all', '--url', url], 2);
    try {
      await p.exited;
    } finally {
      p.kill();
    }
    expect(p.run.stdout.split('\n').filter(Boolean)).toHaveLength(2);
    expect(p.run.stderr).toBe('status 0\n');
  });

  it('sluice tail --json | head -3 ends with status 0 and says nothing', async () => {
    const p = pipedIntoHead(['tail', '--app', app, '--interval', '100ms', '--json', '--url', url], 3);
    try {
      // A tail notices its reader has gone when it next prints: events keep arriving, as from an app.
      await waitFor(
        'the pipeline to end',
        async () => {
          if (!p.run.ended) expect((await postEvents(url, [log(app)])).status).toBe(202);
          return p.run.ended;
        },
        20_000,
      );
    } finally {
      p.kill();
    }
    expect(
      p.run.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as WireEvent).source),
    ).toEqual([{ app }, { app }, { app }]);
    expect(p.run.stderr).toBe('status 0\n');
  });
});
