import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { bytesAreDottedName, DOTTED_NAME_SHAPE, isDottedName } from '../../../src/events/dotted-name';
import {
  bytesAreUuid,
  isLowerCaseUuid,
  isUuid,
  LOWER_CASE_UUID_SHAPE,
  UUID_SHAPE,
} from '../../../src/events/uuid';

/** The contract's shapes as regular expressions: what the tables must answer. */
const UUID_TEXT = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const LOWER_UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DOTTED_NAME_TEXT = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;

/** Text near a shape: its own characters, their neighbours in ASCII, and wider ones. */
const nearText = (alphabet: string, maxLength: number): fc.Arbitrary<string> =>
  fc
    .array(fc.constantFrom(...alphabet.split(''), '/', ':', '@', '[', '`', '{', 'G', 'g', 'é', '😀', ' '), {
      maxLength,
    })
    .map((parts) => parts.join(''));

/** A UUID with up to three characters swapped for others. */
const nearUuid = fc
  .tuple(
    fc.uuid(),
    fc.array(fc.tuple(fc.nat(40), fc.constantFrom('-', 'a', 'F', 'g', '0', '.', '')), { maxLength: 3 }),
  )
  .map(([u, swaps]) => swaps.reduce((s, [at, ch]) => s.slice(0, at) + ch + s.slice(at + 1), u));

const bytes = (s: string): Buffer => Buffer.from(` ${s} `);

describe('the UUID shape', () => {
  it('answers as its regular expression does, on strings and on UTF-8 bytes', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          nearUuid,
          fc.uuid().map((u) => u.toUpperCase()),
          nearText('0123456789abcdefABCDEF-', 40),
        ),
        (s) => {
          expect(isUuid(s)).toBe(UUID_TEXT.test(s));
          expect(isLowerCaseUuid(s)).toBe(LOWER_UUID_TEXT.test(s));
          const b = bytes(s);
          expect(bytesAreUuid(b, 1, b.length - 1)).toBe(UUID_TEXT.test(s));
          expect(new RegExp(`^${UUID_SHAPE.source}$`).test(s)).toBe(UUID_TEXT.test(s));
          expect(new RegExp(`^${LOWER_CASE_UUID_SHAPE.source}$`).test(s)).toBe(LOWER_UUID_TEXT.test(s));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('is the only UUID check in src: no other file writes the shape again', () => {
    const root = path.resolve(__dirname, '../../../src');
    const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const copies = files.filter((f) =>
      /\{8\}-|\{4\}-[^\n]*\{12\}/.test(readFileSync(path.join(root, f), 'utf8')),
    );
    expect(copies).toEqual([]);
  });
});

describe('the dotted-name shape', () => {
  it('answers as its regular expression does, on strings and on UTF-8 bytes', () => {
    fc.assert(
      fc.property(fc.oneof(nearText('aZ09_-..', 12), fc.string({ maxLength: 8 })), (s) => {
        expect(isDottedName(s)).toBe(DOTTED_NAME_TEXT.test(s));
        const b = bytes(s);
        expect(bytesAreDottedName(b, 1, b.length - 1)).toBe(DOTTED_NAME_TEXT.test(s));
        expect(new RegExp(`^(?:${DOTTED_NAME_SHAPE.source})$`).test(s)).toBe(DOTTED_NAME_TEXT.test(s));
      }),
      { numRuns: 3000 },
    );
  });

  it.each([
    ['render.frame_drop', true],
    ['a', true],
    ['A-b_9.x', true],
    ['', false],
    ['.a', false],
    ['a.', false],
    ['a..b', false],
    ['naïve', false],
    ['a\u0000', false],
  ])('%j: %s', (name, expected) => {
    expect(isDottedName(name)).toBe(expected);
  });
});
