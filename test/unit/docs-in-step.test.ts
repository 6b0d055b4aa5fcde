import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOGUE } from '../../src/errors/catalogue';
import { REJECTION_REASONS, rejectionHints } from '../../src/events/rejection';
import { eventLimits } from '../../src/compose/storage';
import { loadConfig } from '../../src/config/load';

const doc = (name: string): string => readFileSync(path.resolve(__dirname, '../../docs', name), 'utf8');
const httpApi = doc('http-api.md');

/**
 * The docs list every stable code; this keeps them in step with the code (settings:
 * test/unit/docs/configuration-reference.test.ts).
 */
describe('docs', () => {
  it.each(Object.entries(ERROR_CATALOGUE))('documents error code %s with its status', (code, { status }) => {
    expect(httpApi).toMatch(new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${status}\\s*\\|`));
  });

  it('documents only error codes the catalogue holds, with their status', () => {
    const documented = [...httpApi.matchAll(/^\| `([a-z_]+)`\s*\| (\d{3})\s*\|/gm)].map((m) => [
      m[1] as string,
      Number(m[2]),
    ]);
    expect(documented.length).toBeGreaterThan(20);
    const catalogue = ERROR_CATALOGUE as Record<string, { status: number } | undefined>;
    expect(documented.filter(([code, status]) => catalogue[code as string]?.status !== status)).toEqual([]);
  });

  it.each(Object.entries(rejectionHints(eventLimits(loadConfig({}, [])))))(
    'documents rejection reason %s with its hint at the default limits',
    (reason, hint) => {
      expect(Object.keys(REJECTION_REASONS)).toContain(reason);
      const row = httpApi.split('\n').find((l) => l.startsWith(`| \`${reason}\``));
      expect(row).toContain(`\`${hint}\``);
    },
  );
});
