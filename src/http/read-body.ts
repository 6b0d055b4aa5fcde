import type { IncomingMessage } from 'node:http';
import { gunzip } from 'node:zlib';
import { SluiceError } from '../errors/catalogue';

/**
 * Reads a request body of at most `maxBytes`, inflating gzip with the output
 * capped at `maxBytes` too: a gzip bomb stops at the cap instead of filling
 * memory. Rejects with a `SluiceError` (413 / 400 / 415).
 */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity' && encoding !== 'gzip') {
    throw new SluiceError(
      'unsupported_encoding',
      `Content-Encoding "${encoding}" is not supported; use gzip or identity.`,
    );
  }
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);

  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  const raw = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
  if (encoding === 'identity') return raw;
  return new Promise<Buffer>((resolve, reject) => {
    gunzip(raw, { maxOutputLength: maxBytes }, (err, out) => {
      if (!err) return resolve(out);
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
        return reject(tooLarge(maxBytes));
      }
      reject(new SluiceError('invalid_gzip'));
    });
  });
}

function tooLarge(maxBytes: number): SluiceError {
  return new SluiceError('body_too_large', `Body is larger than ${maxBytes} bytes (after decompression).`);
}

/** `application/json`, with an optional `charset=utf-8`. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [type, ...params] = header.split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8');
}
