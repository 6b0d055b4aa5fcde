import { SETTINGS } from './settings';

/** The markers around the generated settings table in docs/configuration.md. */
export const REFERENCE_START = '<!-- config:start (generated from src/config by `npm run docs:config`) -->';
export const REFERENCE_END = '<!-- config:end -->';

/** One row of the configuration reference: the cells as markdown, `|` not yet escaped. */
export interface ReferenceRow {
  readonly variable: string;
  readonly default: string;
  readonly accepts: string;
  readonly meaning: string;
}

/** Every setting, in the order `--help` lists them, as docs/configuration.md shows it. */
export function referenceRows(): ReferenceRow[] {
  return Object.values(SETTINGS).map((s) => ({
    variable: `\`${s.env}\``,
    default: 'default' in s ? `\`${s.default}\`` : '—',
    accepts: s.parse.accepts ?? '',
    meaning: s.doc,
  }));
}

const HEADER = ['variable', 'default', 'accepts', 'meaning'] as const;

/** The settings table in markdown (unaligned: the docs' formatter aligns it). */
export function referenceTable(): string {
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [
    line(HEADER),
    line(HEADER.map(() => '---')),
    ...referenceRows().map((r) => line([r.variable, r.default, r.accepts, r.meaning])),
  ].join('\n');
}

/**
 * The cells of every row of the table between the markers of `markdown` (header and rule left
 * out, `\|` read back as `|`), or null when the markers are missing.
 */
export function tableInDoc(markdown: string): string[][] | null {
  const start = markdown.indexOf(REFERENCE_START);
  const end = markdown.indexOf(REFERENCE_END);
  if (start < 0 || end < start) return null;
  return markdown
    .slice(start + REFERENCE_START.length, end)
    .split('\n')
    .filter((l) => l.trim().startsWith('|'))
    .slice(2)
    .map((l) =>
      l
        .trim()
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim().replace(/\\\|/g, '|')),
    );
}

/** `markdown` with the table between the markers replaced by `table`. */
export function withTable(markdown: string, table: string): string {
  const start = markdown.indexOf(REFERENCE_START);
  const end = markdown.indexOf(REFERENCE_END);
  if (start < 0 || end < start)
    throw new Error(`the markers ${REFERENCE_START} … ${REFERENCE_END} are missing`);
  return `${markdown.slice(0, start + REFERENCE_START.length)}\n\n${table}\n\n${markdown.slice(end)}`;
}
