import { randomFillSync } from 'node:crypto';

const random = Buffer.alloc(10);

/**
 * The id the collector gives an event sent without one: a UUID version 7 (RFC 9562 §5.7) of `now`
 * (the collector clock, milliseconds) and 74 random bits, so such rows index like the SDK's.
 * Such an event cannot be deduplicated: sent twice, it gets two ids and is stored twice.
 */
export function assignedEventId(now: number): string {
  randomFillSync(random);
  const hex = random.toString('hex');
  const time = Math.max(0, Math.floor(now)).toString(16).padStart(12, '0').slice(-12);
  const variant = ((random[2] ?? 0) & 0x3f) | 0x80;
  return (
    `${time.slice(0, 8)}-${time.slice(8, 12)}-7${hex.slice(0, 3)}-` +
    `${variant.toString(16)}${hex.slice(6, 8)}-${hex.slice(8, 20)}`
  );
}
