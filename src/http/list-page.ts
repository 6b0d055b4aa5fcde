import { READ_LIMITS } from '../read/read-limits';
import type { NameListQuery } from '../storage/port';
import { decodeNameCursor } from './name-cursor';
import { invalid, type QueryParams } from './query-params';

/** The parameters every list of names takes. */
export const LIST_PARAMETERS = ['prefix', 'limit', 'cursor'] as const;

/**
 * `prefix`, `limit` and `cursor` of `GET /v1/apps` or `GET /v1/metrics/names`: the page of names
 * to read (`NameListQuery` without its window).
 */
export function listPage(q: QueryParams): Omit<NameListQuery, 'from' | 'to'> {
  const L = READ_LIMITS;
  const limit = q.integer('limit', 1, L.maxListPage) ?? L.defaultListPage;
  const cursor = q.string('cursor', 256);
  const after = cursor === undefined ? undefined : decodeNameCursor(cursor);
  if (after === null) throw invalid('cursor', 'is not a cursor this API returned');
  const prefix = q.string('prefix', L.maxTextLength);
  return {
    limit,
    scanLimit: limit * L.listScanPerName,
    ...(after === undefined ? {} : { after }),
    ...(prefix === undefined ? {} : { prefix }),
  };
}
