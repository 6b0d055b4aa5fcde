/**
 * Sentry's envelope format (https://develop.sentry.dev/sdk/data-model/envelopes/): a JSON header
 * line, then items, each a JSON header line (`type`, optional `length` in bytes) and a payload:
 * `length` bytes when the header gives it, else up to the next newline.
 */

/** One item of an envelope: its type (`event`, `client_report`, `session`, …) and payload bytes. */
export interface EnvelopeItem {
  readonly type: string;
  readonly payload: Buffer;
}

export interface Envelope {
  /** The envelope header (`event_id`, `dsn`, `sdk`, `sent_at`); an empty object when absent. */
  readonly header: Readonly<Record<string, unknown>>;
  readonly items: readonly EnvelopeItem[];
}

/** Why an envelope could not be read: the text of a 400 answer. */
export class EnvelopeError extends Error {}

const NEWLINE = 0x0a;
/** Longest item type kept as its name (a longer one counts as `unknown`). */
const MAX_TYPE_LENGTH = 64;

/** Reads an envelope; throws `EnvelopeError` when it is not one. Items past `maxItems` are refused. */
export function parseEnvelope(body: Buffer, maxItems: number): Envelope {
  let at = 0;
  const line = (): Buffer => {
    const end = body.indexOf(NEWLINE, at);
    const stop = end < 0 ? body.length : end;
    const out = body.subarray(at, stop);
    at = end < 0 ? body.length : end + 1;
    return out;
  };
  const header = headerOf(line(), 'envelope header');
  const items: EnvelopeItem[] = [];
  while (at < body.length) {
    const headerLine = line();
    // Trailing newlines (an SDK may end the last payload with one) hold no item.
    if (headerLine.length === 0) continue;
    if (items.length >= maxItems) throw new EnvelopeError(`Envelope carries more than ${maxItems} items.`);
    const itemHeader = headerOf(headerLine, `item ${items.length} header`);
    const type =
      typeof itemHeader.type === 'string' && itemHeader.type.length <= MAX_TYPE_LENGTH
        ? itemHeader.type
        : 'unknown';
    const length = itemHeader.length;
    let payload: Buffer;
    if (length === undefined || length === null) {
      payload = line();
    } else {
      if (
        typeof length !== 'number' ||
        !Number.isSafeInteger(length) ||
        length < 0 ||
        at + length > body.length
      ) {
        throw new EnvelopeError(`Item ${items.length} has a length past the end of the envelope.`);
      }
      payload = body.subarray(at, at + length);
      at += length;
      if (body[at] === NEWLINE) at++;
    }
    items.push({ type, payload });
  }
  return { header, items };
}

function headerOf(text: Buffer, what: string): Record<string, unknown> {
  if (text.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(text.toString('utf8'));
  } catch {
    throw new EnvelopeError(`The ${what} is not JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new EnvelopeError(`The ${what} is not a JSON object.`);
  }
  return value as Record<string, unknown>;
}
