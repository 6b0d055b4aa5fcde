import type { Param } from '../layout/sql-param';

/** Positional parameters (`$1`, `$2`, …) in the order they are added. */
export function positionalParams(): { values: unknown[]; param: Param } {
  const values: unknown[] = [];
  return { values, param: (v) => `$${values.push(v)}` };
}
