import { execFileSync } from 'node:child_process';
import path from 'node:path';

const DIST = path.resolve(__dirname, '../../../dist/src');

/** Whether String.prototype has fast properties in a fresh Node after `requires` are loaded. */
function fastAfterLoading(...requires: string[]): boolean {
  const script = `${requires.map((r) => `require(${JSON.stringify(r)});`).join('')}
    process.stdout.write(String(%HasFastProperties(String.prototype)));`;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8' });
  return out.trim() === 'true';
}

describe('String.prototype stays fast once the collector is loaded', () => {
  it('is turned into a dictionary by loading ioredis alone (the cause)', () => {
    expect(fastAfterLoading()).toBe(true);
    expect(fastAfterLoading(require.resolve('ioredis'))).toBe(false);
  });

  it('is fast after the collector and the worker are loaded', () => {
    expect(fastAfterLoading(path.join(DIST, 'compose/collector.js'))).toBe(true);
    expect(fastAfterLoading(path.join(DIST, 'compose/worker.js'))).toBe(true);
  });
});
