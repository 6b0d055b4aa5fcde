// @ts-check
/**
 * Builds the package into dist/ (run by the repo's `npm run build`, and by `npm pack` through
 * `prepack`):
 *
 *   index.mjs, index.cjs      the core (browsers and Node), ES module and CommonJS
 *   node.mjs, node.cjs        `@sluice/sdk/node`; imports the core's file above and node: builtins
 *   sluice-sdk.min.js         the core as one minified ES module for `<script type="module">`
 *   types/                    declarations (tsc)
 *
 * esbuild and typescript are the repo's devDependencies (resolved from the repo root); the package
 * itself has no dependencies. Every file is written to a temporary name and renamed over the old
 * one, so a test reading dist/ while another runs `npm pack` never sees half a file.
 *
 * Skipped while its inputs are unchanged: dist/.build-stamp holds a hash of src/, package.json,
 * tsconfig.json, this script and the versions of esbuild and typescript, written after a build
 * succeeded; `--force` builds regardless. (The package imports nothing of the repo, the collector's
 * `tools/build-stamp.ts` included: the same check, written for this package alone.)
 */
import { createHash } from 'node:crypto';
import { existsSync, renameSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const { name, version, license } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const stampFile = path.join(dist, '.build-stamp');
const OUTPUTS = ['index.mjs', 'index.cjs', 'node.mjs', 'node.cjs', 'sluice-sdk.min.js', 'types/index.d.ts'];

/** sha256 of every input's name and bytes, and of the tools' versions. */
function inputsHash() {
  const files = [
    ...readdirSync(path.join(root, 'src'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.relative(root, path.join(e.parentPath, e.name))),
    'package.json',
    'tsconfig.json',
    'scripts/build.mjs',
  ].sort();
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file}\0`).update(readFileSync(path.join(root, file)));
  // The tools' versions from their package.json: importing them costs seconds, which an up-to-date
  // build skips.
  const require = createRequire(import.meta.url);
  const tools = ['esbuild', 'typescript'].map((t) => `${t} ${require(`${t}/package.json`).version}`);
  return hash.update(tools.join(' ')).digest('hex');
}

const fingerprint = inputsHash();
if (
  !process.argv.includes('--force') &&
  OUTPUTS.every((f) => existsSync(path.join(dist, f))) &&
  existsSync(stampFile) &&
  readFileSync(stampFile, 'utf8') === fingerprint
) {
  // stderr: `npm pack --json` (which runs this as prepack) prints its JSON on stdout.
  process.stderr.write('sdk: up to date\n');
  process.exit(0);
}
const { build } = await import('esbuild');
const { default: ts } = await import('typescript');

/** @param {string} file @param {string | Uint8Array} contents */
function writeAtomically(file, contents) {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, file);
}

/**
 * The Node entry imports the core through `../index`: kept as an import of the core's own output
 * file, so both entries share one copy of the core.
 * @param {string} coreFile
 * @returns {import('esbuild').Plugin}
 */
const coreAsSibling = (coreFile) => ({
  name: 'core-as-sibling',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/index$/ }, (args) =>
      path.basename(args.resolveDir) === 'node' ? { path: `./${coreFile}`, external: true } : undefined,
    );
  },
});

/** @param {import('esbuild').BuildOptions & { outfile: string }} options */
async function bundle(options) {
  const result = await build({
    bundle: true,
    write: false,
    logLevel: 'warning',
    legalComments: 'none',
    ...options,
  });
  for (const file of result.outputFiles) writeAtomically(file.path, file.contents);
}

/** The two entries, each as an ES module (.mjs) and as CommonJS (.cjs); the Node entry imports the core's file. */
const entries = [
  { name: 'index', source: 'src/index.ts', platform: 'neutral', target: 'es2022', sharesCore: false },
  { name: 'node', source: 'src/node/index.ts', platform: 'node', target: 'node20', sharesCore: true },
];
const formats = /** @type {const} */ ([
  ['esm', 'mjs'],
  ['cjs', 'cjs'],
]);
await Promise.all([
  ...entries.flatMap((entry) =>
    formats.map(([format, ext]) =>
      bundle({
        entryPoints: [path.join(root, entry.source)],
        outfile: path.join(dist, `${entry.name}.${ext}`),
        format,
        platform: /** @type {import('esbuild').Platform} */ (entry.platform),
        target: entry.target,
        plugins: entry.sharesCore ? [coreAsSibling(`index.${ext}`)] : [],
      }),
    ),
  ),
  bundle({
    entryPoints: [path.join(root, 'src/index.ts')],
    outfile: path.join(dist, 'sluice-sdk.min.js'),
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    banner: { js: `/*! ${name} ${version} | ${license} */` },
  }),
]);

const config = ts.getParsedCommandLineOfConfigFile(
  path.join(root, 'tsconfig.json'),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  },
);
if (config === undefined) throw new Error('sdk/tsconfig.json could not be read');
const program = ts.createProgram(config.fileNames, config.options);
const emitted = program.emit(undefined, (file, text) => writeAtomically(file, text));
const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
if (diagnostics.length > 0) {
  const host = {
    getCanonicalFileName: (/** @type {string} */ f) => f,
    getCurrentDirectory: () => root,
    getNewLine: () => '\n',
  };
  process.stderr.write(ts.formatDiagnostics(diagnostics, host));
  process.exit(1);
}
writeAtomically(stampFile, fingerprint);
