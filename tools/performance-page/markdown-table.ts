/**
 * A markdown table laid out as prettier lays it out (cells trimmed, `|` escaped, padded to the
 * widest of their column), so the generated page is stable under `prettier --check`. `right` lists
 * the columns aligned right.
 */
export function markdownTable(
  header: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  right: ReadonlySet<number> = new Set(),
): string {
  const escape = (cell: string): string => cell.trim().replace(/\|/g, '\\|');
  const all = [header, ...rows].map((row) => row.map(escape));
  const widths = header.map((_, i) => Math.max(3, ...all.map((row) => [...(row[i] ?? '')].length)));
  const pad = (cell: string, i: number): string => {
    const fill = ' '.repeat((widths[i] ?? 0) - [...cell].length);
    return right.has(i) ? fill + cell : cell + fill;
  };
  const line = (row: readonly string[]): string => `| ${row.map((cell, i) => pad(cell, i)).join(' | ')} |`;
  const rule = `| ${widths.map((w, i) => (right.has(i) ? `${'-'.repeat(w - 1)}:` : '-'.repeat(w))).join(' | ')} |`;
  return [line(all[0] ?? []), rule, ...all.slice(1).map(line)].join('\n');
}
