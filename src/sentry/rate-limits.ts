import type { EventType } from '../events/types';

/**
 * Sentry data categories an app's limit refuses: what the SDKs send that Sluice stores as events
 * a limit applies to (`default`, `log_item`), and the transactions and spans the SDK then stops
 * sending too. Never `error`: errors keep the fast lane and are never refused by an app's limit.
 */
export const LIMITED_CATEGORIES = ['default', 'log_item', 'transaction', 'span'] as const;

/**
 * The value of `X-Sentry-Rate-Limits` (https://develop.sentry.dev/sdk/expected-features/rate-limiting/):
 * `<retry_after>:<categories>:<scope>:<reason>`. Refused errors (a full error lane) name no
 * category, which Sentry SDKs read as every category; otherwise the limited categories. Scope
 * `key` for an app's own limit, `organization` for the collector's lanes.
 */
export function rateLimitsHeader(
  retryAfterSeconds: number,
  refusedTypes: ReadonlySet<EventType>,
  reason: 'rate_limited' | 'queue_full' | 'storage_unavailable',
): string {
  const categories = refusedTypes.has('error') ? '' : LIMITED_CATEGORIES.join(';');
  const scope = reason === 'rate_limited' ? 'key' : 'organization';
  return `${retryAfterSeconds}:${categories}:${scope}:${reason}`;
}
