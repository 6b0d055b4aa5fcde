import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runCommand } from './run-command';

const SDK_FOLDER = path.resolve(__dirname, '../../sdk');

/** The tarball `npm pack` made of sdk/. */
export interface PackedSdk {
  readonly filename: string;
  /** Paths inside the tarball, sorted. */
  readonly files: readonly string[];
}

/** Runs `command` in `cwd`; its stdout, or a throw with what it printed. */
export async function ok(command: string, args: readonly string[], cwd: string): Promise<string> {
  const r = await runCommand(command, args, cwd);
  if (r.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/**
 * The SDK as an app outside the repo gets it: `npm pack` of sdk/ into `dir`, and the tarball
 * installed with `npm install --offline` (the package has no dependencies: no network needed) into
 * a scratch app at `appDir` holding `files` (name → text). Build first (`npm run build`).
 */
export async function installPackedSdk(
  dir: string,
  appDir: string,
  files: Readonly<Record<string, string>>,
): Promise<PackedSdk> {
  const packed = JSON.parse(
    await ok('npm', ['pack', '--json', '--pack-destination', dir], SDK_FOLDER),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  const tarball = { filename: packed[0]!.filename, files: packed[0]!.files.map((f) => f.path).sort() };
  await writeFile(path.join(appDir, 'package.json'), JSON.stringify({ name: 'scratch-app', private: true }));
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(appDir, name), text);
  await ok(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', path.join(dir, tarball.filename)],
    appDir,
  );
  return tarball;
}
