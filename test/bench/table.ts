import type { BenchRow } from './types';

function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US');
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

function formatExtra(extra: BenchRow['extra']): string {
  if (!extra) return '';
  return Object.entries(extra)
    .map(([k, v]) => `${k}=${typeof v === 'number' ? formatNumber(v) : v}`)
    .join(' ');
}

function metCell(row: BenchRow): string {
  if (row.met === undefined) return '';
  return row.met ? 'yes' : 'NO';
}

const HEADER = ['suite', 'name', 'value', 'unit', 'ratio', 'vs', 'target', 'met', 'details'] as const;
/** Columns aligned right (numbers). */
const RIGHT = new Set([2, 4]);

/** The rows as an aligned plain-text table, one row per line, extras in the last column. */
export function formatTable(rows: readonly BenchRow[]): string {
  const cells = rows.map((r) => [
    r.suite,
    r.name,
    formatNumber(r.value),
    r.unit,
    r.ratio === undefined ? '' : `${formatNumber(r.ratio)}×`,
    r.baseline ?? '',
    r.target ?? '',
    metCell(r),
    formatExtra(r.extra),
  ]);
  const all = [[...HEADER], ...cells];
  const widths = HEADER.map((_, i) => Math.max(...all.map((row) => (row[i] ?? '').length)));
  const line = (row: readonly string[]): string =>
    row
      .map((cell, i) => (RIGHT.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(all[0] ?? []), rule, ...cells.map(line)].join('\n');
}
