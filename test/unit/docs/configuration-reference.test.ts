import { readFileSync } from 'node:fs';
import path from 'node:path';
import { referenceRows, tableInDoc } from '../../../src/config/reference';

const doc = readFileSync(path.resolve(__dirname, '../../../docs/configuration.md'), 'utf8');
const FIX = 'run `npm run docs:config` to write it from src/config';

/** docs/configuration.md's settings table is written from src/config: it cannot drift from the code. */
describe('the configuration reference', () => {
  const inDoc = tableInDoc(doc);
  const generated = referenceRows().map((r) => [r.variable, r.default, r.accepts, r.meaning]);

  it('has the generated table between its markers', () => {
    expect(inDoc).not.toBeNull();
  });

  it('lists every setting of src/config', () => {
    const documented = new Set((inDoc ?? []).map((cells) => cells[0]));
    const missing = generated.map((r) => r[0]).filter((v) => !documented.has(v));
    expect({ missing, fix: FIX }).toEqual({ missing: [], fix: FIX });
  });

  it('lists nothing that is not a setting of src/config', () => {
    const settings = new Set(generated.map((r) => r[0]));
    const extra = (inDoc ?? []).map((cells) => cells[0]).filter((v) => !settings.has(v));
    expect({ extra, fix: FIX }).toEqual({ extra: [], fix: FIX });
  });

  it('shows each setting with the default, limits and meaning of its definition', () => {
    expect({ rows: inDoc, fix: FIX }).toEqual({ rows: generated, fix: FIX });
  });
});
