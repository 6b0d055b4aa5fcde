/**
 * Reads the import graph of src/ and sdk/src/ with the TypeScript parser and checks it against the
 * table "Who may import whom" of docs/ARCHITECTURE.md, so the stated direction and the code cannot
 * drift apart.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');
const SRC = path.join(ROOT, 'src');

interface Import {
  /** Repo-relative path of the importing file. */
  readonly from: string;
  /** The specifier as written. */
  readonly specifier: string;
  /** Absolute path of the imported file; null for a package. */
  readonly file: string | null;
  /** Its path under src/ (`../` when outside); null for a package. */
  readonly target: string | null;
  readonly typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [full] : [];
  });
}

/** The file a relative specifier names: the specifier with `.ts` or `.tsx` added, or the `index.ts` of its folder, as written when none exists. */
function resolveFile(fromFile: string, specifier: string): string {
  const base = path.resolve(path.dirname(fromFile), specifier);
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not this form
    }
  }
  return base;
}

/** Static imports and re-exports, `import()` calls and `import('x').T` types of one file. */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Import[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    const relative = specifier.startsWith('.');
    const resolved = relative ? resolveFile(file, specifier) : null;
    found.push({
      from: path.relative(ROOT, file),
      specifier,
      file: resolved,
      target: resolved === null ? null : path.relative(SRC, resolved),
      typeOnly,
    });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            named !== undefined &&
            ts.isNamedImports(named) &&
            named.elements.length > 0 &&
            named.elements.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier.text, typeOnly);
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node.arguments[0].text, false);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      add(node.argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

interface Rule {
  /** Folders (`http/`) and files (`storage/port.ts`) under src/ this folder may import. */
  readonly allowed: readonly string[];
  readonly every: boolean;
  readonly typesOnly: boolean;
}

/** The table under "Who may import whom": first cell the folders of a row, second what they may import. */
function readRules(): { rules: Map<string, Rule>; kernel: string[] } {
  const doc = readFileSync(path.join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
  const section = doc.split(/^### Who may import whom$/m)[1]?.split(/^#/m)[0];
  if (section === undefined) throw new Error('docs/ARCHITECTURE.md has no "### Who may import whom" section');
  const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
  const rules = new Map<string, Rule>();
  let kernel: string[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').slice(1, -1);
    if (cells.length !== 2 || /^\s*-+\s*$/.test(cells[0] ?? '')) continue;
    const [who = '', what = ''] = cells;
    if (/every folder/.test(who)) {
      kernel = ticked(what);
      continue;
    }
    const rule: Rule = {
      allowed: ticked(what),
      every: /every folder/.test(what),
      typesOnly: /types only/.test(what),
    };
    for (const folder of ticked(who)) rules.set(folder, rule);
  }
  return { rules, kernel };
}

const { rules, kernel } = readRules();

/** The row a path under src/ belongs to: the longest folder (or the file itself) with a row. */
function moduleOf(underSrc: string): string | null {
  if (rules.has(underSrc)) return underSrc;
  const parts = underSrc.split('/');
  for (let n = parts.length - 1; n > 0; n--) {
    const folder = `${parts.slice(0, n).join('/')}/`;
    if (rules.has(folder)) return folder;
  }
  return null;
}

function allows(rule: Rule, target: string, targetModule: string): boolean {
  return rule.every || rule.allowed.includes(targetModule) || rule.allowed.includes(target);
}

const srcImports = sourceFiles(SRC).flatMap(importsOf);

describe('the direction of dependencies (docs/ARCHITECTURE.md, "Who may import whom")', () => {
  it('reads a table with a row per folder and a kernel', () => {
    expect(rules.size).toBeGreaterThan(10);
    expect(kernel.length).toBeGreaterThan(0);
    const top = readdirSync(SRC).map((name) =>
      statSync(path.join(SRC, name)).isDirectory() ? `${name}/` : name,
    );
    expect(top.filter((name) => !rules.has(name))).toEqual([]);
  });

  it('states no cycle between folders', () => {
    const cycles: string[] = [];
    const walk = (folder: string, trail: string[]) => {
      if (trail.includes(folder)) {
        cycles.push([...trail.slice(trail.indexOf(folder)), folder].join(' → '));
        return;
      }
      const rule = rules.get(folder);
      if (rule === undefined || rule.every) return;
      const next = new Set(
        [...rule.allowed, ...(kernel.includes(folder) ? [] : kernel)].map((t) => moduleOf(t)),
      );
      for (const target of next) if (target !== null && target !== folder) walk(target, [...trail, folder]);
    };
    for (const folder of rules.keys()) walk(folder, []);
    expect([...new Set(cycles)]).toEqual([]);
  });

  it('finds no import of src/ against the table', () => {
    const against = srcImports
      .filter((i): i is Import & { target: string } => i.target !== null)
      .flatMap((i) => {
        const own = moduleOf(path.relative('src', i.from));
        const theirs = moduleOf(i.target);
        if (own === null || theirs === null) return [`${i.from}: no row for '${i.specifier}'`];
        if (own === theirs) return [];
        const rule = rules.get(own) as Rule;
        const kernelImport = kernel.includes(theirs) || kernel.includes(i.target);
        if (!kernelImport && !allows(rule, i.target, theirs)) return [`${i.from} → ${i.target}`];
        if (rule.typesOnly && !i.typeOnly) return [`${i.from} → ${i.target} (types only)`];
        return [];
      });
    expect(against).toEqual([]);
  });

  it('has nothing import compose/ or cli.ts but the entry points: cli.ts and the commands whose row names compose/', () => {
    const entryPoints = [
      'src/cli.ts',
      ...[...rules]
        .filter(([who, rule]) => who.endsWith('.ts') && rule.allowed.includes('compose/'))
        .map(([who]) => `src/${who}`),
    ];
    const into = srcImports.filter(
      (i) =>
        !i.from.startsWith('src/compose/') &&
        i.target !== null &&
        (i.target.startsWith('compose/') || i.target === 'cli.ts'),
    );
    expect(into.map((i) => i.from).filter((from) => !entryPoints.includes(from))).toEqual([]);
    expect(entryPoints).toContain('src/commands/serve.ts');
  });

  it('keeps the SDK free of the collector and of packages (node: built-ins only)', () => {
    const sdkSrc = path.join(ROOT, 'sdk/src');
    const outside = sourceFiles(sdkSrc)
      .flatMap(importsOf)
      .filter((i) =>
        i.file === null ? !i.specifier.startsWith('node:') : !i.file.startsWith(`${sdkSrc}${path.sep}`),
      )
      .map((i) => `${i.from} → ${i.specifier}`);
    expect(outside).toEqual([]);
  });
});
