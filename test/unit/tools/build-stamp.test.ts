import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { upToDate, writeStamp } from '../../../tools/build-stamp';

describe('build stamp', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sluice-t-stamp-'));
    writeFileSync(path.join(dir, 'a.ts'), 'a');
    writeFileSync(path.join(dir, 'b.css'), 'b');
    writeFileSync(path.join(dir, 'out.js'), 'built');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const stamp = (): string => path.join(dir, 'stamp.json');
  const outputs = (): string[] => [path.join(dir, 'out.js')];

  it('is up to date while the inputs, the extras and the outputs are as built', () => {
    writeStamp(dir, stamp(), ['a.ts', 'b.css'], ['esbuild 1']);
    expect(upToDate(dir, stamp(), ['esbuild 1'], outputs())).toEqual(['a.ts', 'b.css']);
    // Touching a file (same bytes) changes nothing.
    writeFileSync(path.join(dir, 'a.ts'), 'a');
    expect(upToDate(dir, stamp(), ['esbuild 1'], outputs())).not.toBeNull();
  });

  it('is out of date when an input changes or goes, a tool changes, or an output is missing', () => {
    writeStamp(dir, stamp(), ['a.ts', 'b.css'], ['esbuild 1']);
    expect(upToDate(dir, stamp(), ['esbuild 2'], outputs())).toBeNull();
    expect(upToDate(dir, stamp(), ['esbuild 1'], [...outputs(), path.join(dir, 'gone.js')])).toBeNull();
    writeFileSync(path.join(dir, 'b.css'), 'b2');
    expect(upToDate(dir, stamp(), ['esbuild 1'], outputs())).toBeNull();
    writeFileSync(path.join(dir, 'b.css'), 'b');
    rmSync(path.join(dir, 'a.ts'));
    expect(upToDate(dir, stamp(), ['esbuild 1'], outputs())).toBeNull();
  });

  it('is out of date without a stamp, or with one it cannot read', () => {
    expect(upToDate(dir, stamp(), [], outputs())).toBeNull();
    writeFileSync(stamp(), 'not json');
    expect(upToDate(dir, stamp(), [], outputs())).toBeNull();
  });
});
