/**
 * Writes the settings table of docs/configuration.md from the setting definitions in src/config
 * (`npm run docs:config`); test/unit/docs/configuration-reference.test.ts fails when they differ.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import { referenceTable, withTable } from '../src/config/reference';

const file = path.resolve(__dirname, '..', '..', 'docs', 'configuration.md');

async function main(): Promise<void> {
  const updated = withTable(readFileSync(file, 'utf8'), referenceTable());
  const options = await resolveConfig(file);
  writeFileSync(file, await format(updated, { ...options, filepath: file }));
  process.stdout.write(`wrote the settings table of ${path.relative(process.cwd(), file)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
