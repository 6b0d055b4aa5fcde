import { createServer } from 'node:net';

/** Ports this process has handed out: the kernel may offer a port again once it is closed. */
const handedOut = new Set<number>();

function kernelPick(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A TCP port free on 127.0.0.1 right now (the kernel's pick), for a child to listen on; never one
 * this process handed out before, so the ports of one cluster (collectors, HAProxy's frontends)
 * cannot collide with each other before their owners bind them.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = await kernelPick();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no free port found that this process had not handed out already');
}

/** True when something already listens on `port` of 127.0.0.1 (binding it fails with EADDRINUSE). */
export function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) =>
      err.code === 'EADDRINUSE' ? resolve(true) : reject(err),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}
