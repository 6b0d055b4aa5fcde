/**
 * Every repo path the README and docs/*.md name exists in the tree: backticked paths (`src/…`,
 * `test/…`, `deploy/…`, the short `intake/…` forms that stand for `src/intake/…`, file names such
 * as `durability.test.ts`, globs such as `queue-*.test.ts`) and relative links. So does every
 * path a comment in the code names (`layout/activity-sql.ts`, `token-bucket.ts`).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
/** Built or installed, never in the tree. */
const NOT_IN_TREE = new Set(['node_modules', 'dist', '.git']);

function treeFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (NOT_IN_TREE.has(name)) return [];
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? treeFiles(full) : [path.relative(ROOT, full)];
  });
}

const files = treeFiles(ROOT);
const names = new Set(files.map((f) => path.basename(f)));
const topEntries = new Set(readdirSync(ROOT).filter((n) => !NOT_IN_TREE.has(n)));
const srcFolders = new Set(readdirSync(path.join(ROOT, 'src')));
/** Extensions of the files a doc may name by their name alone. */
const FILE_NAME = /^[\w.-]+\.(ts|md|mjs|cjs|js|json|ya?ml|cfg|sql|sh|proto|css|html)$/;

const docs = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((n) => n.endsWith('.md'))
    .map((n) => `docs/${n}`),
];

/** The path a backticked token names, when it names one: null for code, commands, URLs, routes. */
function pathIn(token: string): string | null {
  const t = token.replace(/[:#]L?\d+(-\d+)?$/, '').replace(/[.,;:]$/, '');
  if (/[\s<>{}()=$|…"']|:\/\//.test(t) || t.startsWith('/') || t.startsWith('-')) return null;
  const first = t.split('/')[0] as string;
  // `./data/sluice.db` and the like are run-time paths (defaults of settings), not the tree's.
  if (first === '.' || first === '..') return null;
  if (t.includes('/')) {
    const known = topEntries.has(first) || srcFolders.has(first) || first === 'dist';
    return known || FILE_NAME.test(path.basename(t)) ? t : null;
  }
  return FILE_NAME.test(t) ? t : null;
}

function globRegex(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^/]*');
  return new RegExp(`(^|/)${body}$`);
}

/** Whether `p` (as a doc wrote it) is in the tree: repo-relative, under src/, or by name alone. */
function exists(p: string): boolean {
  // The build's output (`dist/`, `sdk/dist/`), named as users find it after `npm run build`.
  if (p.split('/').includes('dist')) return true;
  if (p.includes('*')) {
    const re = globRegex(p);
    return files.some((f) => re.test(f));
  }
  if (!p.includes('/')) return names.has(p);
  const bare = p.replace(/\/$/, '');
  return existsSync(path.join(ROOT, bare)) || existsSync(path.join(ROOT, 'src', bare));
}

interface Named {
  readonly doc: string;
  readonly line: number;
  readonly path: string;
}

function namedPaths(doc: string): Named[] {
  const out: Named[] = [];
  let fenced = false;
  readFileSync(path.join(ROOT, doc), 'utf8')
    .split('\n')
    .forEach((text, i) => {
      if (/^\s*```/.test(text)) fenced = !fenced;
      if (fenced) {
        // A map of folders in a code block: the path a line begins with.
        const first = /^([\w.-]+\/[\w./-]*)\s/.exec(text)?.[1];
        if (first !== undefined && pathIn(first) !== null) out.push({ doc, line: i + 1, path: first });
        return;
      }
      for (const m of text.matchAll(/`([^`\n]+)`/g)) {
        const p = pathIn(m[1] as string);
        if (p !== null) out.push({ doc, line: i + 1, path: p });
      }
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = (m[1] as string).split('#')[0] as string;
        if (target === '' || /^[a-z]+:/.test(target)) continue;
        const fromRoot = path.relative(ROOT, path.resolve(ROOT, path.dirname(doc), target));
        out.push({ doc, line: i + 1, path: fromRoot });
      }
    });
  return out;
}

/** The paths under src/ that the folder map of docs/ARCHITECTURE.md lists (its first code block). */
function folderMap(): string[] {
  const doc = readFileSync(path.join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
  const block = doc.split('## Folders and the direction of dependencies')[1]?.split('```')[1] ?? '';
  return [...block.matchAll(/^src\/([\w.-]+)/gm)].map((m) => m[1] as string);
}

describe('paths named in the README and docs/', () => {
  const named = docs.flatMap(namedPaths);

  it('finds the paths it checks', () => {
    expect(named.length).toBeGreaterThan(100);
  });

  it('names only paths that exist in the tree', () => {
    const missing = named.filter((n) => !exists(n.path)).map((n) => `${n.doc}:${n.line} ${n.path}`);
    expect(missing).toEqual([]);
  });

  it("lists every folder and file of src/ in ARCHITECTURE's folder map", () => {
    expect(folderMap().sort()).toEqual(readdirSync(path.join(ROOT, 'src')).sort());
  });
});

/** Source files whose comments are read: the collector, the SDK, the tools and the tests. */
const CODE = files.filter((f) => /^(src|sdk\/src|tools|test)\/.*\.ts$/.test(f));
/** A path with a folder in a comment: `storage/port.ts`, `test/unit/docs-paths.test.ts`, `layout/*-sql.ts`. */
const COMMENT_PATH =
  /(?<![\w.$/-])((?:[\w*.-]+\/)+[\w*.-]+\.(?:ts|md|sql|proto|mjs|cjs|ya?ml|cfg|sh))(?![\w/])/g;
/** A file named alone in a comment; a hyphen tells a file's name from code (`res.json`, `x.ts`). */
const COMMENT_FILE = /(?<![\w.$/-])([a-z]\w*(?:-\w+)+(?:\.\w+)*\.(?:ts|md))(?![\w/])/g;

/** Whether a path a comment in `file` names is in the tree: from the root, src/, the file's folder, or as the end of a path. */
function commentPathExists(file: string, p: string): boolean {
  if (p.split('/').includes('dist') || p.startsWith('node_modules/')) return true;
  if (p.includes('*')) {
    const re = globRegex(p);
    return files.some((f) => re.test(f));
  }
  if (!p.includes('/')) return names.has(p);
  const bare = p.replace(/^\.\//, '');
  return (
    exists(bare) ||
    existsSync(path.resolve(ROOT, path.dirname(file), p)) ||
    files.some((f) => f.endsWith(`/${bare}`))
  );
}

function commentPaths(file: string): Named[] {
  const out: Named[] = [];
  readFileSync(path.join(ROOT, file), 'utf8')
    .split('\n')
    .forEach((text, i) => {
      const comment = /^\s*(?:\/\/|\/\*|\*)(.*)$/.exec(text)?.[1];
      if (comment === undefined) return;
      for (const re of [COMMENT_PATH, COMMENT_FILE]) {
        for (const m of comment.matchAll(re)) out.push({ doc: file, line: i + 1, path: m[1] as string });
      }
    });
  return out;
}

describe('paths named in comments under src/, sdk/src/, tools/ and test/', () => {
  const named = CODE.flatMap(commentPaths);

  it('finds the paths it checks', () => {
    expect(named.length).toBeGreaterThan(200);
  });

  it('names only paths that exist in the tree', () => {
    const missing = named
      .filter((n) => !commentPathExists(n.doc, n.path))
      .map((n) => `${n.doc}:${n.line} ${n.path}`);
    expect(missing).toEqual([]);
  });
});
