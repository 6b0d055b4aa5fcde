import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { consoleDistDir, loadConsoleFiles } from '../../../src/console/assets';
import { consolePage } from '../../../src/console/page';

describe('the console files', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sluice-console-assets-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('has a page with no inline script or style, naming the built files', () => {
    const html = consolePage({ script: 'console-A1.js', style: 'console-B2.css' });
    expect(html).toContain('<script type="module" src="/console/console-A1.js"></script>');
    expect(html).toContain('<link rel="stylesheet" href="/console/console-B2.css">');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
  });

  it('loads the build by its manifest, gzip forms included', () => {
    writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ script: 'c-1.js', style: 'c-2.css' }));
    writeFileSync(path.join(dir, 'c-1.js'), 'console.log(1)');
    writeFileSync(path.join(dir, 'c-2.css'), 'body{}');
    const files = loadConsoleFiles(dir);
    expect(files.map((f) => [f.path, f.contentType, f.immutable])).toEqual([
      ['/', 'text/html; charset=utf-8', false],
      ['/console/c-1.js', 'text/javascript; charset=utf-8', true],
      ['/console/c-2.css', 'text/css; charset=utf-8', true],
    ]);
    for (const f of files) expect(gunzipSync(f.gzip)).toEqual(f.body);
  });

  it('says what is missing when the console was not built, and refuses names outside its folder', () => {
    expect(() => loadConsoleFiles(dir)).toThrow(/no console build at .* \(run npm run build\)/);
    writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ script: '../x.js', style: 'c.css' }));
    expect(() => loadConsoleFiles(dir)).toThrow(/unexpected file: \.\.\/x\.js/);
  });

  it('finds dist/console of the checkout it runs from', () => {
    expect(consoleDistDir(__dirname)).toBe(path.resolve(__dirname, '../../../dist/console'));
  });
});
