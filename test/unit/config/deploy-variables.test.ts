import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { findUnknownVariable } from '../../../src/config/unknown-variables';

const ROOT = path.resolve(__dirname, '../../..');

function filesUnder(relative: string): string[] {
  const full = path.join(ROOT, relative);
  if (!statSync(full).isDirectory()) return [relative];
  return readdirSync(full).flatMap((name) => filesUnder(path.join(relative, name)));
}

/**
 * A collector refuses a `SLUICE_*` variable that is not a setting: the files that start collectors
 * (compose, the image, deploy/, CI) must set none, or they would not start.
 */
describe('the deployment files', () => {
  const files = ['docker-compose.yml', 'Dockerfile', '.ci/run', ...filesUnder('deploy')];

  it.each(files)('%s sets no SLUICE_* variable a collector would refuse', (file) => {
    const text = readFileSync(path.join(ROOT, file), 'utf8');
    const names = [...new Set(text.match(/\bSLUICE_[A-Z0-9_]*[A-Z0-9]\b/g) ?? [])];
    expect(names.filter((name) => findUnknownVariable({ [name]: '' }) !== null)).toEqual([]);
  });
});
