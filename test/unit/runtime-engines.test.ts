/**
 * Every package `npm ci` installs for the collector at run time (package-lock.json, not dev)
 * accepts the oldest Node the project supports (package.json `engines.node`): otherwise
 * `npm install` warns `EBADENGINE` on a supported Node, and the package may not run there.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const REPO = path.resolve(__dirname, '../..');
const read = (file: string): any => JSON.parse(readFileSync(path.join(REPO, file), 'utf8'));

type Version = [number, number, number];

/** `20`, `20.x`, `18.0.0`: missing or `x` parts are 0 (and wild). */
function parse(v: string): { version: Version; wild: number } {
  const parts = v.replace(/^v/, '').split('.');
  const nums = [0, 1, 2].map((i) => {
    const p = parts[i];
    return p === undefined || p === 'x' || p === 'X' || p === '*' ? NaN : Number(p);
  });
  const wild = nums.findIndex((n) => Number.isNaN(n));
  return { version: nums.map((n) => (Number.isNaN(n) ? 0 : n)) as Version, wild: wild === -1 ? 3 : wild };
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

/** Whether `v` satisfies one comparator (`>=18`, `^16`, `20.x`, `*`, `<23`). */
function satisfiesOne(v: Version, comparator: string): boolean {
  const m = /^(>=|<=|>|<|\^|~|=)?\s*(.+)$/.exec(comparator.trim());
  if (m === null) throw new Error(`unread comparator "${comparator}"`);
  const op = m[1] ?? '';
  if (m[2] === '*') return true;
  const { version: bound, wild } = parse(m[2] ?? '');
  const c = compare(v, bound);
  switch (op) {
    case '>=':
      return c >= 0;
    case '>':
      return c > 0;
    case '<=':
      return c <= 0;
    case '<':
      return c < 0;
    case '^':
      return c >= 0 && v[0] === bound[0];
    case '~':
      return c >= 0 && v[0] === bound[0] && v[1] === bound[1];
    default:
      // `20.x`, `20`, `=20.1.0`: equal on the parts given.
      return v.slice(0, wild).every((n, i) => n === bound[i]);
  }
}

/** npm's range: alternatives joined by `||`, each a space-separated list of comparators. */
function satisfies(version: string, range: string): boolean {
  const v = parse(version).version;
  return range.split('||').some((alt) =>
    alt
      .trim()
      .replace(/(>=|<=|>|<|\^|~|=)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean)
      .every((c) => satisfiesOne(v, c)),
  );
}

describe('runtime dependencies', () => {
  const oldest = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(read('package.json').engines.node)?.[1];

  it('the range reader reads the forms the lock file holds', () => {
    expect(satisfies('20.0.0', '>= 22.x')).toBe(false);
    expect(satisfies('20.0.0', '>= 18.x')).toBe(true);
    expect(satisfies('20.0.0', '^16 || ^18 || >=20')).toBe(true);
    expect(satisfies('20.0.0', '20.x || 22.x')).toBe(true);
    expect(satisfies('20.0.0', '^20.19.0 || >=22.12.0')).toBe(false);
    expect(satisfies('20.0.0', '*')).toBe(true);
  });

  it(`accept the oldest supported Node (${oldest})`, () => {
    expect(oldest).toBeDefined();
    const packages = read('package-lock.json').packages as Record<
      string,
      { version?: string; dev?: boolean; engines?: { node?: string } }
    >;
    const refusing = Object.entries(packages)
      .filter(([name, p]) => name !== '' && p.dev !== true && p.engines?.node !== undefined)
      .filter(([, p]) => !satisfies(oldest ?? '', p.engines?.node ?? '*'))
      .map(
        ([name, p]) => `${name.replace(/^.*node_modules\//, '')}@${p.version} wants node ${p.engines?.node}`,
      );
    expect(refusing).toEqual([]);
  });
});
