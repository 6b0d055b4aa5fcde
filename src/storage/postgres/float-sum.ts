import { SUM_SCALE, SUM_SCALE_EXPONENT, sumOf } from '../layout/rollup-folds';

/**
 * PostgreSQL's `FoldDialect.unscale` (see layout/rollup-folds.ts). float8 multiplication raises on
 * overflow, so the scaled sum is compared first: below 2^(1024 − SUM_SCALE_EXPONENT) it
 * multiplies back to a finite double, above it is ±Infinity. PostgreSQL's NaN equals itself and
 * sorts above every number, hence its own branch (NULL) before the sign tests.
 */
export function unscaleSum(scaled: string): string {
  return `CASE WHEN abs(${scaled}) < power(2::float8, ${1024 - SUM_SCALE_EXPONENT}) THEN ${scaled} * ${SUM_SCALE}
    WHEN ${scaled} = 'NaN'::float8 THEN NULL
    WHEN ${scaled} > 0 THEN 'Infinity'::float8 ELSE '-Infinity'::float8 END`;
}

/** The float8 sum of `term` that never raises: ±Infinity past a double's range. */
export function floatSum(term: string): string {
  return sumOf(term, unscaleSum);
}
