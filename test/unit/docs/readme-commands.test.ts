/**
 * The README's commands run from a clone as written: the `sluice` bin is not on the PATH of a
 * clone (nothing installs it globally), so a command names it through `npx sluice` (npm runs the
 * project's own bin) or an `npm run` script. Checked in every code span and code block.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { COMMANDS } from '../../../src/commands/help';

const readme = readFileSync(path.resolve(__dirname, '../../../README.md'), 'utf8');

/** Inline code spans and the lines of fenced blocks. */
function codeTexts(markdown: string): string[] {
  const out: string[] = [];
  const fenced = /^```[^\n]*\n([\s\S]*?)^```/gm;
  for (const m of markdown.matchAll(fenced)) out.push(...(m[1] ?? '').split('\n'));
  const prose = markdown.replace(fenced, '');
  for (const m of prose.matchAll(/`([^`\n]+)`/g)) out.push(m[1] ?? '');
  return out;
}

describe('README commands', () => {
  const commands = Object.keys(COMMANDS).join('|');
  const bare = new RegExp(`(^|[;&|(]\\s*|^(?:[A-Z_]+=\\S*\\s+)+)sluice (${commands})\\b`);

  it('run the sluice bin through npx (or an npm script), never bare', () => {
    const offending = codeTexts(readme).filter((text) => bare.test(text.trim()));
    expect(offending).toEqual([]);
  });

  it('name only commands that exist', () => {
    const named = codeTexts(readme).flatMap((t) => [...t.matchAll(/npx sluice (\S+)/g)].map((m) => m[1]));
    expect(named.length).toBeGreaterThan(0);
    for (const command of named) expect(Object.keys(COMMANDS)).toContain(command);
  });
});
