import type { Request, Response } from 'express';
import type { ConsoleFile } from '../../console/assets';

/**
 * The console's only sources: its own origin for script, style and API calls; no inline script or
 * style, no frames, no other origin. `img-src data:` is the page's empty icon.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: ReadonlyArray<[string, string]> = [
  ['Content-Security-Policy', CONSOLE_CSP],
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'no-referrer'],
  ['X-Frame-Options', 'DENY'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['Cross-Origin-Resource-Policy', 'same-origin'],
];

/** Serves one console file from memory, gzip-compressed when the client takes it. */
export function consoleFile(f: ConsoleFile) {
  return (req: Request, res: Response): void => {
    for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value);
    res.setHeader('Content-Type', f.contentType);
    res.setHeader('Cache-Control', f.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    res.setHeader('Vary', 'Accept-Encoding');
    const gzip = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
    if (gzip) res.setHeader('Content-Encoding', 'gzip');
    const body = gzip ? f.gzip : f.body;
    res.setHeader('Content-Length', String(body.length));
    res.status(200).end(req.method === 'HEAD' ? undefined : body);
  };
}
