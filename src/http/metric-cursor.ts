import { isStorableText } from '../events/cut-text';
import { isLowerCaseUuid } from '../events/uuid';
import type { MetricPosition, MetricResolution } from '../storage/port';
import { MAX_TIMESTAMP_MS } from './timestamp';

const CURSOR_TEXT = /^(raw|1m|1h):(\d{1,16}):([\s\S]{1,128})$/;

/**
 * A keyset position in `GET /v1/metrics`, opaque to clients: base64url of
 * `<resolution>:<ts>:<key>`, the key being a raw point's id or a bucket's app. A cursor belongs to
 * the resolution it was made for.
 */
export function encodeMetricCursor(resolution: MetricResolution, pos: MetricPosition): string {
  return Buffer.from(`${resolution}:${pos.ts}:${pos.key}`).toString('base64url');
}

/**
 * The position a cursor names for `resolution`, or null when it is not one `encodeMetricCursor`
 * could have made for it. Each part is checked to the storage types (bigint; uuid or text without
 * U+0000): a cursor that passes never fails a cast.
 */
export function decodeMetricCursor(resolution: MetricResolution, cursor: string): MetricPosition | null {
  const m = CURSOR_TEXT.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (m === null || m[1] !== resolution) return null;
  const ts = Number(m[2]);
  const key = m[3] as string;
  if (ts > MAX_TIMESTAMP_MS || !isStorableText(key)) return null;
  if (resolution === 'raw' && !isLowerCaseUuid(key)) return null;
  return { ts, key };
}
