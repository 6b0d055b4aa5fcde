/**
 * What the docs' steps leave in a clone is ignored by git: the SDK's tarball (`npm pack`,
 * docs/sdk.md), the build, the default SQLite file, and `node_modules` (a directory or a link).
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const REPO = path.resolve(__dirname, '../..');

function ignored(file: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '--no-index', '-q', file], { cwd: REPO });
    return true;
  } catch {
    return false;
  }
}

describe('.gitignore', () => {
  it.each(['sdk/sluice-sdk-0.1.0.tgz', 'sluice-0.1.0.tgz', 'dist', 'data/sluice.db', 'node_modules'])(
    'ignores %s',
    (file) => {
      expect(ignored(file)).toBe(true);
    },
  );
});
