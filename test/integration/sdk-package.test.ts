/**
 * The SDK as an app outside the repo gets it: `npm pack` in sdk/, the tarball installed with
 * `npm install --offline` into a scratch app in a temporary folder (the package has no
 * dependencies, so no network is needed), then events sent from that app to a real collector
 * process with auth on: from a CommonJS and an ES module script in Node, and from a page in
 * headless Chromium that loads the minified bundle with `<script type="module">` from another
 * origin (CORS). Each is read back through the read API. Build first (`npm run build`).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { generateKey } from '../../src/auth/api-keys';
import { launchChromium } from '../support/chromium';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { getJson, waitFor } from '../support/http';
import { installPackedSdk, ok, type PackedSdk } from '../support/packed-sdk';
import { runCommand, type CommandRun } from '../support/run-command';

const REPO = path.resolve(__dirname, '../..');
const TSC = path.join(REPO, 'node_modules/typescript/bin/tsc');
const APP = `sdk-app-${process.pid}`;

/** What both Node scripts do with the client `create` makes: three events tagged with `runtime`. */
const CAPTURE = `
const e = process.env;
const client = create({ endpoint: e.ENDPOINT, app: e.APP, apiKey: e.KEY, batchSize: Number(e.BATCH) });
const attributes = { runtime: e.RUNTIME };
client.lifecycle('app.started', attributes);
client.error(new TypeError('boom'), attributes);
client.metric('app.latency_ms', 12, attributes);
`;
const PRINT_STATS = 'process.stdout.write(JSON.stringify(client.stats()))';

/** The scratch app's files: two scripts that send and then print `stats()`, and typed code for tsc. */
const SCRIPTS = {
  'send.cjs': `const { createNodeClient: create } = require('@sluice/sdk/node');
${CAPTURE}
client.flush({ timeoutMs: 10000 }).then(() => ${PRINT_STATS});`,
  'send.mjs': `import { createClient as create } from '@sluice/sdk';
${CAPTURE}
await client.flush({ timeoutMs: 10000 });
${PRINT_STATS}`,
  // Type-checked only: the declarations serve \`import\` and \`require\`, the core and the Node entry.
  'typed.mts': `
import { createClient, type Client, type ClientOptions, type SluiceSdkError } from '@sluice/sdk';
import { createNodeClient, fileStore } from '@sluice/sdk/node';
const options: ClientOptions = { endpoint: 'http://127.0.0.1/v1/events', app: 'a', onError: (e: SluiceSdkError) => void e.code, debug: true };
const client: Client = createClient(options);
createNodeClient({ ...options, persistence: fileStore('/tmp/x.json') }).metric('a.b', client.stats().sent);
`,
  'typed.cts': `
import sdk = require('@sluice/sdk/node');
const client: sdk.Client = sdk.createNodeClient({ endpoint: 'http://127.0.0.1/v1/events', app: 'a', exitHooks: false });
client.log('a.b', 'text');
`,
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      module: 'node16',
      moduleResolution: 'node16',
      target: 'es2022',
      strict: true,
      noEmit: true,
      skipLibCheck: true, // as most apps have it: our declarations are checked where they are built
      types: ['node'],
      typeRoots: [path.join(REPO, 'node_modules/@types')],
    },
    include: ['*.mts', '*.cts'],
  }),
};

const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>app</title></head><body>
<script type="module">
  import { createClient } from '/sluice-sdk.min.js';
  window.createSluiceClient = createClient;
</script></body></html>`;

/** Serves the page and the bundle as installed in the scratch app, on an origin of its own. */
async function startPageServer(bundlePath: () => string): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer((req, res) => {
    if (req.url === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    if (req.url === '/sluice-sdk.min.js') {
      return void readFile(bundlePath()).then(
        (js) => res.writeHead(200, { 'content-type': 'text/javascript' }).end(js),
        () => res.writeHead(500).end(),
      );
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

let dir: string;
let appDir: string;
let tarball: PackedSdk;
let collector: CollectorProcess;
let page: { url: string; server: http.Server };
let browser: Browser;
const ingest = generateKey('ingest', 'sdk-app', APP);
const reader = generateKey('read', 'sdk-test-reader');

interface StoredEvent {
  readonly type: string;
  readonly name: string;
  readonly attributes: Record<string, unknown>;
}

async function stored(runtime: string): Promise<StoredEvent[]> {
  const res = await getJson(
    `${collector.url}/v1/events?${new URLSearchParams({ app: APP, limit: '1000' })}`,
    {
      authorization: `Bearer ${reader.secret}`,
    },
  );
  if (res.status !== 200) throw new Error(`GET /v1/events: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body.events as StoredEvent[]).filter((e) => e.attributes.runtime === runtime);
}

/** The three events every script sends, as stored: the metric leaves as its summary at flush. */
const SENT = ['TypeError', 'app.latency_ms_summary', 'app.started'];

async function storedNames(runtime: string): Promise<string[]> {
  const events = await waitFor(`${runtime} events to be stored`, async () => {
    const found = await stored(runtime);
    return found.length >= SENT.length ? found : null;
  });
  return events.map((e) => e.name).sort();
}

function sendFromNode(script: string, runtime: string, key: string, batch = 100): Promise<CommandRun> {
  return runCommand(process.execPath, [script], appDir, {
    ENDPOINT: `${collector.url}/v1/events`,
    APP,
    KEY: key,
    RUNTIME: runtime,
    BATCH: String(batch),
  });
}

async function packAndInstall(): Promise<void> {
  tarball = await installPackedSdk(dir, appDir, SCRIPTS);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sluice-sdk-package-'));
  appDir = path.join(dir, 'app');
  await ok('mkdir', [appDir], dir);
  const keysFile = path.join(dir, 'keys.json');
  await writeFile(keysFile, JSON.stringify({ keys: [ingest.entry, reader.entry] }));
  page = await startPageServer(() => path.join(appDir, 'node_modules/@sluice/sdk/dist/sluice-sdk.min.js'));
  // In parallel; each is assigned as soon as it is up, so afterAll stops it even when another fails.
  await Promise.all([
    startCollectorProcess({
      SLUICE_SQLITE_PATH: path.join(dir, 'sluice.db'),
      SLUICE_AUTH_KEYS_FILE: keysFile,
      SLUICE_CORS_ORIGINS: page.url,
    }).then((c) => (collector = c)),
    launchChromium().then((b) => (browser = b)),
    packAndInstall(),
  ]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  page?.server.closeAllConnections();
  await new Promise<void>((resolve) => (page ? page.server.close(() => resolve()) : resolve()));
  await collector?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the SDK package, installed from its tarball into an app outside the repo', () => {
  it('is its own package: no dependencies, ESM + CommonJS + types + a minified browser bundle', async () => {
    const installed = path.join(appDir, 'node_modules/@sluice/sdk');
    const manifest = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: '@sluice/sdk', engines: { node: '>=20' } });
    expect(manifest.private).toBeUndefined();
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies'])
      expect(manifest[field]).toBeUndefined();
    expect(tarball.files).toEqual(
      expect.arrayContaining([
        'README.md',
        'package.json',
        'dist/index.mjs',
        'dist/index.cjs',
        'dist/node.mjs',
        'dist/node.cjs',
        'dist/sluice-sdk.min.js',
        'dist/types/index.d.ts',
        'dist/types/node/index.d.ts',
      ]),
    );
    expect(
      tarball.files.filter((f) => !f.startsWith('dist/') && f !== 'README.md' && f !== 'package.json'),
    ).toEqual([]);

    // What each shipped file imports (esbuild reads them; nothing is bundled).
    const importsOf = async (file: string): Promise<string[]> => {
      const result = await build({
        entryPoints: [path.join(installed, file)],
        bundle: true,
        write: false,
        metafile: true,
        platform: 'neutral',
        logLevel: 'silent',
        plugins: [
          {
            name: 'list-imports',
            setup(b) {
              b.onResolve({ filter: /.*/ }, (args) =>
                args.kind === 'entry-point' ? undefined : { path: args.path, external: true },
              );
            },
          },
        ],
      });
      return Object.values(result.metafile.inputs).flatMap((input) => input.imports.map((i) => i.path));
    };
    expect(await importsOf('dist/sluice-sdk.min.js')).toEqual([]);
    expect(await importsOf('dist/index.mjs')).toEqual([]);
    expect(await importsOf('dist/index.cjs')).toEqual([]);
    for (const [file, core] of [
      ['dist/node.mjs', './index.mjs'],
      ['dist/node.cjs', './index.cjs'],
    ] as const) {
      const imports = await importsOf(file);
      expect(imports).toContain(core); // the Node entry shares the core's file instead of a copy of it
      expect(imports.filter((i) => i !== core && !i.startsWith('node:'))).toEqual([]);
    }

    const typed = await runCommand(process.execPath, [TSC, '-p', 'tsconfig.json'], appDir);
    expect({ code: typed.code, output: typed.stdout + typed.stderr }).toEqual({ code: 0, output: '' });
  });

  it.each([
    ['CommonJS (require @sluice/sdk/node)', 'send.cjs', 'cjs'],
    ['ES module (import @sluice/sdk)', 'send.mjs', 'esm'],
  ])('a Node script, %s, sends events that are stored', async (_, script, runtime) => {
    const result = await sendFromNode(script, runtime, ingest.secret);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toMatchObject({ sent: 3, buffered: { total: 0 } });
    expect(await storedNames(runtime)).toEqual(SENT);
  });

  it('a page loads the minified bundle with <script type="module"> and sends events from another origin', async () => {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (err) => errors.push(err.message));
    await tab.goto(page.url);
    await tab.waitForFunction(
      () => typeof (window as { createSluiceClient?: unknown }).createSluiceClient === 'function',
    );
    const result = await tab.evaluate(
      async ([endpoint, app, key]) => {
        const create = (window as unknown as { createSluiceClient: (o: object) => any }).createSluiceClient;
        const client = create({ endpoint, app, apiKey: key });
        const attributes = { runtime: 'browser' };
        client.lifecycle('app.started', attributes);
        try {
          (null as unknown as { f(): void }).f();
        } catch (err) {
          client.error(err, attributes);
        }
        client.metric('app.latency_ms', 12, attributes);
        await client.flush({ timeoutMs: 10000 });
        // A wrong key is told apart from an unreachable collector: the 401 carries CORS headers.
        const codes: string[] = [];
        const wrong = create({
          endpoint,
          app,
          apiKey: 'sk_in_wrong',
          onError: (e: { code: string }) => codes.push(e.code),
        });
        wrong.lifecycle('app.started', { runtime: 'browser-wrong-key' });
        await wrong.flush({ timeoutMs: 10000 });
        return { stats: client.stats(), codes };
      },
      [`${collector.url}/v1/events`, APP, ingest.secret] as const,
    );
    expect(errors).toEqual([]);
    expect(result.stats).toMatchObject({ sent: 3, buffered: { total: 0 } });
    expect(result.codes).toEqual(['unauthorized']);
    expect(await storedNames('browser')).toEqual(SENT);
    await tab.close();
  });

  it('a wrong apiKey: flush() resolves, and one warning (not one per request) says what to fix', async () => {
    const result = await sendFromNode('send.cjs', 'wrong-key', 'sk_in_not-the-key', 1);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      sent: 0,
      dropped: { client_error: 3 },
      requests: { failed: 3 },
    });
    const lines = result.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^sluice: .*401.*apiKey/);
    expect(await stored('wrong-key')).toEqual([]);
  });
});
