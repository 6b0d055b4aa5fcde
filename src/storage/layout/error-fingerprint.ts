import { createHash } from 'node:crypto';
import { UUID_SHAPE } from '../../events/uuid';

/*
 * Errors are grouped by kind and message fingerprint: the message with what varies between
 * occurrences of one error (ids, numbers, quoted values) replaced by placeholders, so
 * "order 1234 not found" and "order 98 not found" are one group. Computed at read time from the
 * stored message, the same way for both storages.
 */

const UUID = new RegExp(`\\b${UUID_SHAPE.source}\\b`, 'gi');
/** Hex runs of 8+ characters holding a digit (hashes, addresses), `0x…` literals. */
const HEX = /\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/gi;
/** Text in matching single, double or back quotes, on one line, up to 200 characters. */
const QUOTED = /'[^'\n]{0,200}'|"[^"\n]{0,200}"|`[^`\n]{0,200}`/g;
/** Numbers, with sign, decimals and exponent, not inside a word (`v2`, `http2` and `30.5s` stay). */
const NUMBER = /(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?!\w|\.\d)/gi;
const SPACE = /\s+/g;

/** The message with its varying parts replaced: `<uuid>`, `<hex>`, `<str>`, `<num>`; spaces folded. */
export function messageTemplate(message: string): string {
  return message
    .replace(UUID, '<uuid>')
    .replace(QUOTED, '<str>')
    .replace(HEX, '<hex>')
    .replace(NUMBER, '<num>')
    .replace(SPACE, ' ')
    .trim();
}

/** A short stable id of (kind, template): 16 hex characters of its SHA-256. */
export function errorFingerprint(kind: string | null, template: string): string {
  return createHash('sha256')
    .update(`${kind ?? ''}\u0000${template}`)
    .digest('hex')
    .slice(0, 16);
}
