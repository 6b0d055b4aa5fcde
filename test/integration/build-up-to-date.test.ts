/**
 * `npm start` builds first (`prestart`); after a build, with nothing changed, each step of
 * `npm run build` has nothing to do: tsc finds its project up to date (incremental, `tsc -b`), and
 * the SDK and console builds skip. Build first (`npm test` does).
 */
import path from 'node:path';
import { runCommand } from '../support/run-command';

const REPO = path.resolve(__dirname, '../..');

describe('npm run build, run again with nothing changed', () => {
  it('tsc finds the project up to date', async () => {
    const run = await runCommand('npx', ['tsc', '-b', 'tsconfig.build.json', '--dry', '--verbose'], REPO);
    expect(run.stdout).toContain("Project '");
    expect(run.stdout).toMatch(/tsconfig\.build\.json' is up to date/);
  });

  it.each([
    // The SDK's says so on stderr: `npm pack --json` runs it and prints its JSON on stdout.
    ['the SDK', 'sdk/scripts/build.mjs', 'stderr', 'sdk: up to date'],
    ['the console', 'dist/tools/build-console.js', 'stdout', 'console: up to date'],
  ] as const)('%s build skips', async (_what, script, stream, line) => {
    const run = await runCommand(process.execPath, [script], REPO);
    expect(run.code).toBe(0);
    expect(run[stream].trim()).toBe(line);
  });
});
