import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { isIPv4 } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { SluiceError } from '../errors/catalogue';

/*
 * Protected mode (docs/operations.md, "Protected mode"), after Redis's: with no API keys, what
 * shows stored data answers loopback clients only. The client is the socket's peer, and every
 * address a proxy says it forwarded the request for: a proxy on this host (HAProxy's `option
 * forwardfor`, nginx's `proxy_add_x_forwarded_for`) relaying a client from elsewhere does not make
 * that client local. Forwarding headers can only refuse, never admit: a peer that is not loopback is
 * refused whatever they say. A value that is not an address (`unknown`, an obfuscated name) is not
 * loopback.
 */

/** Whether `address`, as Node gives a socket's remote address or a proxy writes it, is loopback. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  if (address === '::1') return true;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return isIPv4(v4) && v4.startsWith('127.');
}

/** One forwarded address as a proxy writes it: quotes, `[v6]:port` and `v4:port` reduced to the address. */
function bareAddress(raw: string): string {
  const s = raw.trim().replace(/^"(.*)"$/, '$1');
  if (s.startsWith('[')) return s.slice(1, s.indexOf(']') < 0 ? undefined : s.indexOf(']'));
  const v4WithPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(s);
  return v4WithPort ? (v4WithPort[1] as string) : s;
}

function headerValues(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(','));
}

/** Every address the request's forwarding headers name (`X-Forwarded-For`, `X-Real-IP`, `Forwarded: for=`). */
export function forwardedFor(headers: IncomingHttpHeaders): string[] {
  const out = [...headerValues(headers['x-forwarded-for']), ...headerValues(headers['x-real-ip'])];
  for (const element of headerValues(headers.forwarded)) {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq > 0 && pair.slice(0, eq).trim().toLowerCase() === 'for') out.push(pair.slice(eq + 1));
    }
  }
  return out.map(bareAddress);
}

/** Whether a request comes from this host: its peer, and every address it was forwarded for, loopback. */
export function fromLoopback(req: IncomingMessage): boolean {
  return isLoopbackAddress(req.socket.remoteAddress) && forwardedFor(req.headers).every(isLoopbackAddress);
}

/** Express middleware: `403 protected_mode` for a client that is not on loopback (`fromLoopback`). */
export function loopbackOnly() {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (!fromLoopback(req)) throw new SluiceError('protected_mode');
    next();
  };
}
