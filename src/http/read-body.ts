import type { IncomingMessage } from 'node:http';
import { gunzip, inflate } from 'node:zlib';
import { SluiceError } from '../errors/catalogue';
import { cutText } from '../events/cut-text';

/**
 * Reads a request body of at most `maxBytes`, inflating gzip (and, with `deflate` set, zlib's
 * deflate) with the output capped at `maxBytes` too: a gzip bomb stops at the cap instead of
 * filling memory. Rejects with a `SluiceError` (413 / 400 / 415). `deflate`: whether
 * `Content-Encoding: deflate` is admitted (the Sentry endpoints; default false).
 */
export async function readBody(req: IncomingMessage, maxBytes: number, deflate = false): Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity' && encoding !== 'gzip' && !(deflate && encoding === 'deflate')) {
    throw new SluiceError(
      'unsupported_encoding',
      `Content-Encoding ${JSON.stringify(cutText(encoding, 64))} is not supported; use ${deflate ? 'gzip, deflate' : 'gzip'} or identity.`,
    );
  }
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);

  const raw = await readRaw(req, maxBytes);
  if (encoding === 'identity') return raw;
  return new Promise<Buffer>((resolve, reject) => {
    const inflater = encoding === 'gzip' ? gunzip : inflate;
    inflater(raw, { maxOutputLength: maxBytes }, (err, out) => {
      if (!err) return resolve(out);
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
        return reject(tooLarge(maxBytes));
      }
      reject(
        new SluiceError(
          'invalid_gzip',
          encoding === 'deflate' ? 'Body is not valid deflate (zlib).' : undefined,
        ),
      );
    });
  });
}

/**
 * The raw body, with listeners rather than an async iterator (which costs a promise per chunk on a
 * path admitted for every request). Past `maxBytes` the stream is paused and the read fails: the 413
 * answer then closes the connection without reading the rest.
 */
function readRaw(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const done = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total > maxBytes) {
        done();
        req.pause();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total));
    };
    const onError = (err: Error): void => {
      done();
      reject(err);
    };
    // 'close' before 'end': the client went away mid-body.
    const onClose = (): void => {
      done();
      reject(Object.assign(new Error('request body cut off'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function tooLarge(maxBytes: number): SluiceError {
  return new SluiceError('body_too_large', `Body is larger than ${maxBytes} bytes (after decompression).`);
}

/**
 * `application/json`, with an optional charset that must be UTF-8. Per RFC 9110 §8.3.1 the type and
 * the parameter name are case-insensitive, the charset value is too (RFC 2978), and a parameter
 * value may be a quoted string: `charset="UTF-8"` is the same as `charset=utf-8`. Other parameters
 * are ignored.
 */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  // What SDKs send: answered without splitting the header.
  if (header === 'application/json') return true;
  const [type, ...params] = header.split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => {
    const eq = p.indexOf('=');
    if (eq < 0 || p.slice(0, eq).trimEnd() !== 'charset') return true;
    return unquote(p.slice(eq + 1).trimStart()) === 'utf-8';
  });
}

/** The value of a quoted-string (RFC 9110 §5.6.4), or the token as it is. */
function unquote(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value.slice(1, -1).replace(/\\(.)/g, '$1');
}
