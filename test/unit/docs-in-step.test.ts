import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOGUE } from '../../src/errors/catalogue';
import { REJECTION_REASONS } from '../../src/events/rejection';
import { SETTINGS } from '../../src/config/settings';

const readme = readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');

/** The README documents every stable code and every setting; this keeps them in step with the code. */
describe('README', () => {
  it.each(Object.entries(ERROR_CATALOGUE))('documents error code %s with its status', (code, { status }) => {
    expect(readme).toMatch(new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${status}\\s*\\|`));
  });

  it.each(Object.keys(REJECTION_REASONS))('documents rejection reason %s', (reason) => {
    expect(readme).toContain(`\`${reason}\``);
  });

  it.each(Object.values(SETTINGS).map((s) => [s.env, 'default' in s ? s.default : undefined]))(
    'documents %s with its default',
    (env, def) => {
      const row = readme.split('\n').find((l) => l.startsWith(`| \`${env}\``));
      expect(row).toBeDefined();
      if (def !== undefined) expect(row).toContain(`\`${def}\``);
    },
  );
});
