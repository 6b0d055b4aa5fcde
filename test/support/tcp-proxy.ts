import net from 'node:net';

/** What the proxy does with connections: see the methods of `TcpProxy`. */
type ProxyMode = 'forward' | 'cut' | 'refuse' | 'pause';

/** One client connection and its upstream (null while held or black-holed). */
interface Link {
  readonly client: net.Socket;
  upstream: net.Socket | null;
}

/**
 * A loopback TCP proxy that a test can cut, refuse or pause, standing in for "the database went
 * away" without touching the shared server other tests use:
 * - `cut()` drops every connection and black-holes new ones (accepted, never answered — the worst
 *   case for timeouts);
 * - `refuse()` drops every connection and resets new ones at once (a stopped server);
 * - `pause()` stops forwarding bytes both ways on every connection, and holds new ones
 *   (a server that is SIGSTOPped: connections open, nothing answers);
 * - `restore()` forwards again: paused connections go on where they stopped, held ones connect;
 *   black-holed ones are dropped.
 */
export class TcpProxy {
  private server: net.Server | null = null;
  private readonly links = new Set<Link>();
  private mode: ProxyMode = 'forward';
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  cut(): void {
    this.mode = 'cut';
    this.dropAll();
  }

  refuse(): void {
    this.mode = 'refuse';
    this.dropAll();
  }

  pause(): void {
    this.mode = 'pause';
    for (const link of this.links) {
      link.client.pause();
      link.upstream?.pause();
    }
  }

  restore(): void {
    const paused = this.mode === 'pause';
    this.mode = 'forward';
    for (const link of [...this.links]) {
      if (!paused) this.drop(link);
      else if (link.upstream === null) this.connect(link);
      else {
        link.client.resume();
        link.upstream.resume();
      }
    }
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: net.Socket): void {
    client.on('error', () => client.destroy());
    if (this.mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    const link: Link = { client, upstream: null };
    this.links.add(link);
    client.on('close', () => this.drop(link));
    if (this.mode === 'forward') this.connect(link);
    else client.pause();
  }

  private connect(link: Link): void {
    const upstream = net.connect(this.targetPort, this.targetHost);
    link.upstream = upstream;
    upstream.on('error', () => upstream.destroy());
    upstream.on('close', () => this.drop(link));
    link.client.pipe(upstream);
    upstream.pipe(link.client);
    link.client.resume();
  }

  private drop(link: Link): void {
    this.links.delete(link);
    link.client.destroy();
    link.upstream?.destroy();
  }

  private dropAll(): void {
    for (const link of [...this.links]) this.drop(link);
  }
}
