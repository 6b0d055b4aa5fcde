/*
 * The members of an event of the wire contract (docs/http-api.md) and of its objects, in the order
 * the single pass numbers them (events/scan/member-names.ts). The body's shape budget counts them
 * (events/wire-shape.ts); validation reads them by name (events/validate.ts).
 */

export const EVENT_MEMBERS = [
  'id',
  'type',
  'name',
  'ts',
  'source',
  'value',
  'summary',
  'error',
  'message',
  'attributes',
] as const;

export const SOURCE_MEMBERS = ['app', 'version', 'env'] as const;

/** In the order a summary's numbers are kept: count, min, max, sum, avg. */
export const SUMMARY_MEMBERS = ['count', 'min', 'max', 'sum', 'avg'] as const;

export const ERROR_MEMBERS = ['message', 'kind', 'stack'] as const;
