import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CATALOGUE } from '../../src/errors/catalogue';
import { REJECTION_REASONS } from '../../src/events/rejection';

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

  it.each(Object.keys(REJECTION_REASONS))('documents rejection reason %s', (reason) => {
    expect(httpApi).toContain(`\`${reason}\``);
  });
});
