import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOGUE } from '../../src/errors/catalogue';
import { REJECTION_REASONS, rejectionHints } from '../../src/events/rejection';
import { eventLimits } from '../../src/compose/storage';
import { loadConfig } from '../../src/config/load';
import { SETTINGS } from '../../src/config/settings';

const doc = (name: string): string => readFileSync(path.resolve(__dirname, '../../docs', name), 'utf8');
const httpApi = doc('http-api.md');
const configuration = doc('configuration.md');

/** The docs list every stable code and every setting; this keeps them in step with the code. */
describe('docs', () => {
  it.each(Object.entries(ERROR_CATALOGUE))('documents error code %s with its status', (code, { status }) => {
    expect(httpApi).toMatch(new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${status}\\s*\\|`));
  });

  it.each(Object.entries(rejectionHints(eventLimits(loadConfig({}, [])))))(
    'documents rejection reason %s with its hint at the default limits',
    (reason, hint) => {
      expect(Object.keys(REJECTION_REASONS)).toContain(reason);
      const row = httpApi.split('\n').find((l) => l.startsWith(`| \`${reason}\``));
      expect(row).toContain(`\`${hint}\``);
    },
  );

  it.each(Object.values(SETTINGS).map((s) => [s.env, 'default' in s ? s.default : undefined]))(
    'documents %s with its default',
    (env, def) => {
      const row = configuration.split('\n').find((l) => l.startsWith(`| \`${env}\``));
      expect(row).toBeDefined();
      if (def !== undefined) expect(row).toContain(`\`${def}\``);
    },
  );
});
