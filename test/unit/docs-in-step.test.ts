import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOGUE } from '../../src/errors/catalogue';
import { REJECTION_REASONS } from '../../src/events/rejection';
import { SETTINGS } from '../../src/config/settings';

const doc = (name: string): string => readFileSync(path.resolve(__dirname, '../../docs', name), 'utf8');
const httpApi = doc('http-api.md');
const configuration = doc('configuration.md');

/** The docs list every stable code and every setting; this keeps them in step with the code. */
describe('docs', () => {
  it.each(Object.entries(ERROR_CATALOGUE))('documents error code %s with its status', (code, { status }) => {
    expect(httpApi).toMatch(new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${status}\\s*\\|`));
  });

  it.each(Object.keys(REJECTION_REASONS))('documents rejection reason %s', (reason) => {
    expect(httpApi).toContain(`\`${reason}\``);
  });

  it.each(Object.values(SETTINGS).map((s) => [s.env, 'default' in s ? s.default : undefined]))(
    'documents %s with its default',
    (env, def) => {
      const row = configuration.split('\n').find((l) => l.startsWith(`| \`${env}\``));
      expect(row).toBeDefined();
      if (def !== undefined) expect(row).toContain(`\`${def}\``);
    },
  );
});
