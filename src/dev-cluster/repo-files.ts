import { existsSync } from 'node:fs';
import path from 'node:path';

/** Files of the Sluice checkout the runner needs. */
export interface RepoFiles {
  readonly root: string;
  /** The template every local HAProxy config is derived from. */
  readonly haproxyCfg: string;
  /** `dist/src/cli.js`: what each collector runs (`npm run build` makes it). */
  readonly cli: string;
}

/**
 * Finds the checkout from this file's folder: `src/dev-cluster` under ts-jest, `dist/src/dev-cluster`
 * when compiled. The root is the nearest folder up holding both package.json and haproxy.cfg.
 */
export function locateRepoFiles(from: string = __dirname): RepoFiles {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'haproxy.cfg'))) {
      return {
        root: dir,
        haproxyCfg: path.join(dir, 'haproxy.cfg'),
        cli: path.join(dir, 'dist', 'src', 'cli.js'),
      };
    }
    if (path.dirname(dir) === dir) {
      throw new Error(`no Sluice checkout (package.json and haproxy.cfg) above ${from}`);
    }
  }
}
