import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The repository's root: the nearest folder above `from` holding package.json. Tools run both from
 * dist/tools (built) and tools/ (under jest), so a fixed number of `..` would be wrong in one.
 */
export function repoRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}
