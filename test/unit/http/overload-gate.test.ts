import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { withOverloadGate } from '../../../src/http/overload-gate';

async function serve(refuse: () => boolean): Promise<{ server: Server; url: string; reached: string[] }> {
  const reached: string[] = [];
  const app = (req: { method?: string; url?: string }, res: { end(b: string): void }) => {
    reached.push(`${req.method} ${req.url}`);
    res.end('app');
  };
  const gate = withOverloadGate(app as never, {
    refuseUnread: () => (refuse() ? { retryAfterSeconds: 2 } : null),
    hold: () => () => undefined,
  });
  const server = createServer(gate).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, reached };
}

function post(url: string, path: string, body: string) {
  return fetch(`${url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
}

describe('overload gate', () => {
  it('answers POST /v1/events 429 overloaded without the app while refusing, and keeps the connection usable', async () => {
    let refusing = true;
    const { server, url, reached } = await serve(() => refusing);
    try {
      const res = await post(url, '/v1/events', JSON.stringify({ events: new Array(500).fill({ x: 'y' }) }));
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(await res.json()).toEqual({
        accepted: 0,
        rejected: [],
        error: 'overloaded',
        message: expect.stringContaining('Retry all of its events'),
      });
      expect(reached).toEqual([]);

      // Other routes and methods always reach the app; so does ingest once the loop has caught up.
      expect(await (await post(url, '/v1/eventsX', '{}')).text()).toBe('app');
      expect(await (await fetch(`${url}/v1/events?app=a`)).text()).toBe('app');
      refusing = false;
      expect(await (await post(url, '/v1/events?x=1', '{}')).text()).toBe('app');
      expect(reached).toEqual(['POST /v1/eventsX', 'GET /v1/events?app=a', 'POST /v1/events?x=1']);
    } finally {
      server.close();
    }
  });

  it('leaves a kept-alive connection able to carry the next request after an unread body', async () => {
    let refusing = true;
    const { server, url, reached } = await serve(() => refusing);
    const agent = new (await import('node:http')).Agent({ keepAlive: true, maxSockets: 1 });
    const send = (body: string) =>
      new Promise<{ status: number; socket: unknown }>((resolve, reject) => {
        const req = request(`${url}/v1/events`, { method: 'POST', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, socket: req.socket }));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      const first = await send('x'.repeat(200_000));
      refusing = false;
      const second = await send('{}');
      expect([first.status, second.status]).toEqual([429, 200]);
      expect(second.socket).toBe(first.socket);
      expect(reached).toEqual(['POST /v1/events']);
    } finally {
      agent.destroy();
      server.close();
    }
  });
});
