import { createHash } from 'node:crypto';

/**
 * A deterministic event id: a UUID (version 8, RFC 9562 "custom") made of the first 128 bits of
 * the SHA-256 of `parts`. An exporter that resends an export after a timeout or a 429 sends the
 * same records, which get the same ids and timestamps, so storage keeps each once.
 */
export function deterministicId(...parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const p of parts) hash.update(p).update('\u0000');
  const b = hash.digest();
  b[6] = ((b[6] as number) & 0x0f) | 0x80;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = b.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
