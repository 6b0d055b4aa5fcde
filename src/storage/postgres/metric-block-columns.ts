/**
 * `metric_blocks`' arrays, one per column of a sample, in table order (migration 009): a block's
 * samples are their elements at one index, and `metric_samples` unnests them in this order.
 */
export const BLOCK_SAMPLE_ARRAYS = [
  'id',
  'ts',
  'version',
  'env',
  'value',
  'count',
  'min',
  'max',
  'sum',
  'message',
  'attributes',
] as const;

/** Every column of `metric_blocks`, in table order: the block's minute, app and name, then the arrays. */
export const BLOCK_COLUMNS = ['bucket', 'app', 'name', ...BLOCK_SAMPLE_ARRAYS].join(', ');
