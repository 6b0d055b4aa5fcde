/**
 * Builds the web console (`npm run build`, after tsc): bundles src/console/web with esbuild into
 * dist/console (hashed names, minified, one script and one stylesheet), writes the manifest the
 * collector serves them by, and fails when the page, script and stylesheet together cost more than
 * CONSOLE_MAX_GZIP_BYTES to download (gzip, as the collector serves them). Skipped while the files
 * the last build read (esbuild's metafile), this script and esbuild's version are unchanged
 * (`build-stamp.ts`); `--force` builds regardless.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, version as esbuildVersion } from 'esbuild';
import {
  CONSOLE_DIST_DIR,
  CONSOLE_MANIFEST,
  CONSOLE_MAX_GZIP_BYTES,
  consolePage,
  type ConsoleManifest,
} from '../src/console/page';
import { upToDate, writeStamp } from './build-stamp';

const root = path.resolve(__dirname, '..', '..');
const outdir = path.join(root, 'dist', CONSOLE_DIST_DIR);
const stampFile = path.join(outdir, '.build-stamp.json');
/** What decides the output besides the bundled files: this script (and the page it sizes) and esbuild. */
const EXTRA = [
  `esbuild ${esbuildVersion}`,
  readFileSync(__filename, 'utf8'),
  readFileSync(path.join(__dirname, '..', 'src', 'console', 'page.js'), 'utf8'),
];

/** The manifest and the files it names, when they all exist. */
function builtFiles(): string[] {
  const manifestPath = path.join(outdir, CONSOLE_MANIFEST);
  if (!existsSync(manifestPath)) return [manifestPath, stampFile];
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as ConsoleManifest;
  return [manifestPath, stampFile, path.join(outdir, manifest.script), path.join(outdir, manifest.style)];
}

async function main(): Promise<void> {
  if (!process.argv.includes('--force') && upToDate(root, stampFile, EXTRA, builtFiles()) !== null) {
    console.log('console: up to date');
    return;
  }
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    entryPoints: [path.join(root, 'src', 'console', 'web', 'console.ts')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome110', 'firefox115', 'safari16'],
    outdir,
    entryNames: '[name]-[hash]',
    metafile: true,
    // uPlot's MIT notice stays with its code.
    legalComments: 'eof',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
  const script = outputs.find((f) => f.endsWith('.js'));
  const style = outputs.find((f) => f.endsWith('.css'));
  if (script === undefined || style === undefined)
    throw new Error(`unexpected console build: ${outputs.join(', ')}`);
  const manifest: ConsoleManifest = { script, style };
  writeFileSync(path.join(outdir, CONSOLE_MANIFEST), `${JSON.stringify(manifest)}\n`);

  const sizes: Array<[string, number]> = [
    ['page', gzipSync(consolePage(manifest), { level: 9 }).length],
    [script, gzipSync(readFileSync(path.join(outdir, script)), { level: 9 }).length],
    [style, gzipSync(readFileSync(path.join(outdir, style)), { level: 9 }).length],
  ];
  const total = sizes.reduce((n, [, b]) => n + b, 0);
  const line = sizes.map(([f, b]) => `${f} ${(b / 1024).toFixed(1)} KiB`).join(', ');
  if (total > CONSOLE_MAX_GZIP_BYTES) {
    console.error(
      `console: ${(total / 1024).toFixed(1)} KiB gzip (${line}) is over the ${CONSOLE_MAX_GZIP_BYTES / 1024} KiB budget`,
    );
    process.exit(1);
  }
  const inputs = Object.keys(result.metafile.inputs).map((f) => path.relative(root, path.resolve(f)));
  writeStamp(root, stampFile, inputs, EXTRA);
  console.log(
    `console: ${(total / 1024).toFixed(1)} KiB gzip of ${CONSOLE_MAX_GZIP_BYTES / 1024} KiB (${line})`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
