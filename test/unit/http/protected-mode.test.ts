import type { IncomingMessage } from 'node:http';
import { forwardedFor, fromLoopback, isLoopbackAddress } from '../../../src/http/protected-mode';

const request = (remoteAddress: string, headers: Record<string, string> = {}): IncomingMessage =>
  ({ socket: { remoteAddress }, headers }) as unknown as IncomingMessage;

describe('protected mode: who is on loopback', () => {
  it('takes 127.0.0.0/8, ::1 and their IPv4-mapped form, nothing else', () => {
    for (const a of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'])
      expect({ a, loopback: isLoopbackAddress(a) }).toEqual({ a, loopback: true });
    for (const a of [
      '10.0.0.1',
      '::ffff:10.0.0.1',
      '0.0.0.0',
      '::',
      '127.0.0.1.nip.io',
      'unknown',
      '',
      undefined,
    ])
      expect({ a, loopback: isLoopbackAddress(a) }).toEqual({ a, loopback: false });
  });

  it('reads every address a proxy forwarded for: X-Forwarded-For, X-Real-IP, Forwarded', () => {
    expect(
      forwardedFor({
        'x-forwarded-for': '203.0.113.7, 127.0.0.1:5000',
        'x-real-ip': '::1',
        forwarded: 'for=192.0.2.60;proto=http, For="[2001:db8:cafe::17]:4711";by=10.0.0.1',
      }),
    ).toEqual(['203.0.113.7', '127.0.0.1', '::1', '192.0.2.60', '2001:db8:cafe::17']);
  });

  it('is loopback only when the peer and every forwarded address are; headers never admit', () => {
    expect(fromLoopback(request('127.0.0.1'))).toBe(true);
    expect(fromLoopback(request('::1', { 'x-forwarded-for': '127.0.0.1' }))).toBe(true);
    expect(fromLoopback(request('127.0.0.1', { 'x-forwarded-for': '10.1.2.3' }))).toBe(false);
    expect(fromLoopback(request('127.0.0.1', { forwarded: 'for=unknown' }))).toBe(false);
    expect(fromLoopback(request('127.0.0.1', { forwarded: 'for=_hidden' }))).toBe(false);
    expect(fromLoopback(request('10.1.2.3', { 'x-forwarded-for': '127.0.0.1' }))).toBe(false);
  });
});
