import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { withOtlpOverloadGate } from '../../../src/http/otlp/otlp-overload-gate';
import { createOtlpMetrics } from '../../../src/metrics/otlp-instruments';
import { otlpTypes } from '../../../src/otlp/proto/otlp-types';

async function serve(refuse: () => boolean): Promise<{ server: Server; url: string; reached: string[] }> {
  const reached: string[] = [];
  const listener = (req: { method?: string; url?: string }, res: { end(b: string): void }) => {
    reached.push(`${req.method} ${req.url}`);
    res.end('receiver');
  };
  const gate = withOtlpOverloadGate(
    listener as never,
    { refuseUnread: () => (refuse() ? { retryAfterSeconds: 2 } : null), hold: () => () => undefined },
    createOtlpMetrics(new Registry()),
  );
  const server = createServer(gate).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reached };
}

describe('OTLP overload gate', () => {
  it('refuses every export unread with 429, Retry-After and a google.rpc.Status in the request’s encoding', async () => {
    let refusing = true;
    const { server, url, reached } = await serve(() => refusing);
    try {
      const json = await fetch(`${url}/v1/logs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"resourceLogs":[]}',
      });
      expect(json.status).toBe(429);
      expect(json.headers.get('retry-after')).toBe('2');
      expect(await json.json()).toEqual({ code: 8, message: expect.stringContaining('Retry the export') });

      const pb = await fetch(`${url}/v1/traces`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf' },
        body: new Uint8Array([0x0a, 0x00]),
      });
      expect(pb.status).toBe(429);
      expect(pb.headers.get('content-type')).toBe('application/x-protobuf');
      const status = otlpTypes().status.decode(new Uint8Array(await pb.arrayBuffer()));
      expect(status.toJSON()).toEqual({ code: 8, message: expect.stringContaining('Retry the export') });
      expect(reached).toEqual([]);

      refusing = false;
      const through = await fetch(`${url}/v1/metrics`, { method: 'POST', body: '{}' });
      expect(await through.text()).toBe('receiver');
      expect(reached).toEqual(['POST /v1/metrics']);
    } finally {
      server.close();
    }
  });
});
