/**
 * One word per idea (docs/ARCHITECTURE.md, "Words"): the words each entry keeps out of names are
 * read from the page, and no identifier or identifier-like string of src/ may be built with one.
 * Names a user sees (metric names, `SLUICE_*` variables) keep their spelling and are not checked.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');

function keptOut(): string[] {
  const doc = readFileSync(path.join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
  const section = doc.split(/^## Words$/m)[1]?.split(/^## /m)[0] ?? '';
  return [...section.matchAll(/Kept out of names: ([^.]+)\./g)].flatMap((m) =>
    [...(m[1] as string).matchAll(/_([a-z]+)_/g)].map((w) => w[1] as string),
  );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [full] : [];
  });
}

/** The words of a name: `cannotAdmitApp` → cannot, admit, app; `queue_full` → queue, full. */
function wordsOf(name: string): string[] {
  return name
    .replace(/^#/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[\s_]+/)
    .filter((w) => w !== '');
}

/** Identifiers, and string literals shaped like one (a `kind`, a method name in `Pick<…>`). */
function namesIn(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) names.push(node.text);
    else if (
      ts.isStringLiteral(node) &&
      /^[a-z][A-Za-z]*(_[a-z]+)*$/.test(node.text) &&
      !node.text.startsWith('sluice_')
    ) {
      names.push(node.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return names;
}

describe('the word list (docs/ARCHITECTURE.md, "Words")', () => {
  const banned = new Set(keptOut());

  it('reads the words kept out of names from the page', () => {
    expect([...banned]).toEqual(expect.arrayContaining(['take', 'taken']));
  });

  it('splits names into their words', () => {
    expect(wordsOf('appsTakenIn')).toEqual(['apps', 'taken', 'in']);
    expect(wordsOf('WholeTake')).toEqual(['whole', 'take']);
    expect(wordsOf('queue_full')).toEqual(['queue', 'full']);
  });

  it('finds no name in src/ built with a word kept out', () => {
    const found = sourceFiles(path.join(ROOT, 'src')).flatMap((file) =>
      [...new Set(namesIn(file))]
        .filter((name) => wordsOf(name).some((w) => banned.has(w)))
        .map((name) => `${path.relative(ROOT, file)}: ${name}`),
    );
    expect(found).toEqual([]);
  });
});
