import * as crypto from 'node:crypto';

/** SHA-256 of a text: the one-shot `crypto.hash` (Node ≥ 20.12) costs half of a Hash object. */
const sha256: (text: string) => Buffer =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'buffer')
    : (text) => crypto.createHash('sha256').update(text).digest();

/**
 * A deterministic event id: a UUID (version 8, RFC 9562 "custom") made of the first 128 bits of
 * the SHA-256 of `parts`. An exporter that resends an export after a timeout or a 429 sends the
 * same records, which get the same ids and timestamps, so storage keeps each once.
 */
export function deterministicId(...parts: readonly string[]): string {
  const b = sha256(parts.join('\u0000'));
  b[6] = ((b[6] as number) & 0x0f) | 0x80;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = b.toString('hex', 0, 16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
