import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { CONSOLE_DIST_DIR, CONSOLE_MANIFEST, consolePage, type ConsoleManifest } from './page';

/** One file of the console, held in memory with its gzip form. */
export interface ConsoleFile {
  /** URL path, e.g. `/` or `/console/console-3F2A.js`. */
  readonly path: string;
  readonly contentType: string;
  readonly body: Buffer;
  readonly gzip: Buffer;
  /** Hashed names never change content: cached for good. The page is revalidated. */
  readonly immutable: boolean;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

function file(urlPath: string, contentType: string, body: Buffer, immutable: boolean): ConsoleFile {
  return { path: urlPath, contentType, body, gzip: gzipSync(body, { level: 9 }), immutable };
}

/** The build's output folder for the console: `dist/console` of the checkout or image this runs from. */
export function consoleDistDir(from: string = __dirname): string | null {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist', CONSOLE_DIST_DIR);
    if (path.dirname(dir) === dir) return null;
  }
}

/**
 * Reads the built console (manifest, script, stylesheet) into memory and renders its page; throws
 * with the folder and what is missing when the build did not make it (`npm run build` does).
 */
export function loadConsoleFiles(dir: string): ConsoleFile[] {
  const manifestPath = path.join(dir, CONSOLE_MANIFEST);
  if (!existsSync(manifestPath)) throw new Error(`no console build at ${dir} (run npm run build)`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as ConsoleManifest;
  const assets = [manifest.script, manifest.style].map((name) => {
    const contentType = CONTENT_TYPES[path.extname(name)];
    if (contentType === undefined || name !== path.basename(name)) {
      throw new Error(`console manifest at ${manifestPath} names an unexpected file: ${name}`);
    }
    return file(`/console/${name}`, contentType, readFileSync(path.join(dir, name)), true);
  });
  const page = file('/', 'text/html; charset=utf-8', Buffer.from(consolePage(manifest)), false);
  return [page, ...assets];
}
