/**
 * The README's examples, run as written against a fresh collector with the defaults `npm start`
 * gives (its own port, and a fresh working directory for `./data/sluice.db`): every `sh` block
 * after the opening one (the two commands it stands for, `npm install && npm start`, are what this
 * test does itself), and the `js` snippet, written to the file its first line names. The only
 * change made to a block is the port (`localhost:8080` and `127.0.0.1:8080`). A `# ` line after
 * commands is their shown output: it must match (`…` stands for any text). The request body of
 * docs/http-api.md is run the same way, and so are docs/otlp.md's curl exports (on the OTLP port). Blocks of one file run in one bash session, in order, from
 * a folder that holds `sluice/` (this repo) and `your-app/` (an empty app), as the README says.
 * Build first (`npm test` does): it packs the SDK.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../support/collector-process';
import { getJson, waitFor } from '../support/http';
import { runCommand, type CommandRun } from '../support/run-command';
import { spawnSluice, waitUntilReady, type SluiceProcess } from '../support/sluice-process';

const REPO = path.resolve(__dirname, '../..');

interface Block {
  readonly lang: string;
  readonly lines: readonly string[];
  /** 1-based line of the opening fence. */
  readonly line: number;
}

/** Fenced code blocks of a markdown text. */
function codeBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let open: { lang: string; line: number; lines: string[] } | null = null;
  markdown.split('\n').forEach((text, i) => {
    const fence = /^```(\w*)\s*$/.exec(text);
    if (open === null) {
      if (fence) open = { lang: fence[1] ?? '', line: i + 1, lines: [] };
    } else if (text.startsWith('```')) {
      blocks.push(open);
      open = null;
    } else {
      open.lines.push(text);
    }
  });
  return blocks;
}

interface Step {
  readonly commands: string;
  /** The shown output: `# ` lines after the commands; empty when none is shown. */
  readonly expected: readonly string[];
  readonly where: string;
}

/** A `sh` block as steps: commands, then the output lines shown after them. */
function stepsOf(block: Block, file: string): Step[] {
  const steps: Step[] = [];
  let commands: string[] = [];
  let expected: string[] = [];
  const flush = (): void => {
    if (commands.length > 0) {
      steps.push({ commands: commands.join('\n'), expected, where: `${file}:${block.line}` });
    }
    commands = [];
    expected = [];
  };
  for (const line of block.lines) {
    if (line.startsWith('#')) expected.push(line.replace(/^# ?/, ''));
    else {
      if (expected.length > 0) flush();
      commands.push(line);
    }
  }
  flush();
  return steps;
}

/** Whether `actual` is `expected`, where `…` in `expected` stands for any text. */
function matches(expected: string, actual: string): boolean {
  const pattern = expected
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${pattern}$`).test(actual);
}

const STEP_END = '\u001eSTEP-END\u001e';

/** Runs the steps in one bash session from `cwd`; npm's own variables are left out (they point npm at this repo). */
function runSteps(steps: readonly Step[], cwd: string): Promise<CommandRun> {
  const script = ['set -euo pipefail', ...steps.map((s) => `${s.commands}\nprintf '\\n${STEP_END}\\n'`)].join(
    '\n',
  );
  // The SDK tarball has no dependencies: nothing to fetch, nothing to audit.
  return runCommand('bash', ['-c', script], cwd, {
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  });
}

/** Fails with the step, its output and stderr when a step failed or its output differs from the shown one. */
function checkRun(steps: readonly Step[], run: CommandRun): void {
  const outputs = run.stdout.split(`\n${STEP_END}\n`);
  steps.forEach((step, i) => {
    const out = outputs[i];
    const context = `${step.where}, step ${i + 1}:\n${step.commands}\n--- stdout:\n${out ?? ''}\n--- stderr:\n${run.stderr}`;
    if (out === undefined || (i === outputs.length - 1 && run.code !== 0)) {
      throw new Error(`exited ${run.code} in ${context}`);
    }
    if (step.expected.length === 0) return;
    const actual = out.replace(/\n+$/, '').split('\n');
    const same =
      actual.length === step.expected.length && step.expected.every((e, j) => matches(e, actual[j] ?? ''));
    if (!same) throw new Error(`shown output differs in ${context}\n--- shown:\n${step.expected.join('\n')}`);
  });
  if (run.code !== 0) throw new Error(`exited ${run.code}:\n${run.stderr}`);
}

describe('the README and the HTTP API examples run as written', () => {
  let root: string;
  let collector: SluiceProcess;
  let port: number;
  let otlpPort: number;
  const portOf = (text: string): string =>
    text
      .replace(/(localhost|127\.0\.0\.1):8080/g, `$1:${port}`)
      .replace(/(localhost|127\.0\.0\.1):4318/g, `$1:${otlpPort}`);

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'sluice-readme-'));
    await symlink(REPO, path.join(root, 'sluice'));
    await mkdir(path.join(root, 'your-app'));
    await writeFile(
      path.join(root, 'your-app/package.json'),
      JSON.stringify({ name: 'your-app', version: '1.0.0', private: true }),
    );
    await mkdir(path.join(root, 'collector'));
    port = await freePort();
    otlpPort = await freePort();
    // `npm start` without the build: the same command line (its memory flags) and no setting but the ports.
    collector = spawnSluice(
      'serve',
      {
        SLUICE_PORT: String(port),
        SLUICE_OTLP_PORT: String(otlpPort),
        SLUICE_HOST: '0.0.0.0',
        SLUICE_LOG_LEVEL: 'info',
      },
      { cwd: path.join(root, 'collector') },
    );
    await waitUntilReady(collector, 'collector', `http://127.0.0.1:${port}`, 15_000);
  });

  afterAll(async () => {
    await collector?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('README.md: the opening commands start what this test starts; every other block runs and shows what it says', async () => {
    const blocks = codeBlocks(await readFile(path.join(REPO, 'README.md'), 'utf8'));
    const [opening, ...rest] = blocks;
    expect(opening?.lines.join('\n')).toMatch(/^npm install && npm start\s+#.*\nnpm test\s+#/);
    const start = JSON.parse(await readFile(path.join(REPO, 'package.json'), 'utf8')).scripts.start as string;
    expect(start).toMatch(/dist\/src\/cli\.js serve$/);

    const steps: Step[] = [];
    for (const block of rest) {
      if (block.lang === 'sh')
        steps.push(...stepsOf({ ...block, lines: block.lines.map(portOf) }, 'README.md'));
      else if (block.lang === 'js') {
        const target = /^\/\/ (\S+)$/.exec(block.lines[0] ?? '')?.[1];
        if (target === undefined)
          throw new Error(`README.md:${block.line}: a js block names its file on its first line`);
        await writeFile(path.join(root, target), portOf(block.lines.join('\n')));
      } else if (block.lang !== '') {
        throw new Error(`README.md:${block.line}: a ${block.lang} block this test does not run`);
      }
    }
    expect(steps.length).toBeGreaterThanOrEqual(4);
    checkRun(steps, await runSteps(steps, root));
  }, 120_000);

  it('docs/http-api.md: the request body example is taken whole', async () => {
    const blocks = codeBlocks(await readFile(path.join(REPO, 'docs/http-api.md'), 'utf8'));
    const steps = blocks
      .filter((b) => b.lang === 'sh')
      .flatMap((b) => stepsOf({ ...b, lines: b.lines.map(portOf) }, 'docs/http-api.md'));
    expect(steps.length).toBeGreaterThanOrEqual(1);
    checkRun(steps, await runSteps(steps, root));
  });

  it('docs/otlp.md: the curl export of each signal is taken, and a time in seconds gets the hint shown', async () => {
    const blocks = codeBlocks(await readFile(path.join(REPO, 'docs/otlp.md'), 'utf8'));
    const steps = blocks
      .filter((b) => b.lang === 'sh' && b.lines.some((l) => l.startsWith('curl ')))
      .flatMap((b) => stepsOf({ ...b, lines: b.lines.map(portOf) }, 'docs/otlp.md'));
    expect(steps.map((s) => /\/v1\/(\w+)/.exec(s.commands)?.[1])).toEqual([
      'logs',
      'metrics',
      'traces',
      'logs',
    ]);
    checkRun(steps, await runSteps(steps, root));
    const stored = await waitFor('the exported records, read back', async () => {
      const res = await getJson(`http://127.0.0.1:${port}/v1/events?app=web-shop&limit=1000`);
      const names = new Set(
        (res.body.events as { type: string; name: string }[]).map((e) => `${e.type} ${e.name}`),
      );
      const wanted = [
        'log checkout',
        'metric render.frame_drop',
        'metric checkout.requests',
        'error POST.checkout',
      ];
      return wanted.every((w) => names.has(w)) ? wanted : null;
    });
    expect(stored).toHaveLength(4);
  });
});
