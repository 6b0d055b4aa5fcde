import net from 'node:net';

/** What the load generators need from one `POST` answer. */
export interface PostAnswer {
  readonly status: number;
  /** `accepted` of a 202 or 429 body (events taken); 0 for any other answer. */
  readonly accepted: number;
}

const CRLF_CRLF = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH = /\r\ncontent-length:\s*(\d+)/i;
const CONNECTION_CLOSE = /\r\nconnection:\s*close/i;
/** Longest wait for an answer (milliseconds). */
const TIMEOUT_MS = 30_000;

interface Pending {
  readonly resolve: (answer: PostAnswer) => void;
  readonly reject: (err: Error) => void;
}

function acceptedOf(status: number, body: Buffer): number {
  if (status !== 202 && status !== 429) return 0;
  try {
    const n = (JSON.parse(body.toString('utf8')) as { accepted?: unknown }).accepted;
    return typeof n === 'number' ? n : 0;
  } catch {
    return 0;
  }
}

/**
 * One keep-alive HTTP/1.1 connection with one request outstanding at a time: the request head and
 * body leave in one write, and the answer is read by its status line and `Content-Length` only
 * (every server measured here sends one). A fraction of the CPU of a general-purpose client, so
 * that the generator sharing two cores with the server and PostgreSQL neither steals their time nor
 * adds its own event-loop delay to the latencies it records.
 */
class RawConnection {
  private socket: net.Socket | null = null;
  private pending: Pending | null = null;
  private buffered: Buffer = Buffer.alloc(0);
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  get busy(): boolean {
    return this.pending !== null;
  }

  post(head: Buffer, body: Buffer): Promise<PostAnswer> {
    return new Promise<PostAnswer>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.buffered = Buffer.alloc(0);
      const socket = this.socket ?? this.connect();
      this.timer = setTimeout(() => this.fail(new Error('request timed out')), TIMEOUT_MS);
      socket.cork();
      socket.write(head);
      socket.write(body);
      socket.uncork();
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }

  /** Opens the connection now; resolves once it is established. */
  open(): Promise<void> {
    const socket = this.socket ?? this.connect();
    if (!socket.connecting) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    });
  }

  private connect(): net.Socket {
    const socket = net.connect({ host: this.host, port: this.port, noDelay: true });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => {
      if (this.socket === socket) this.socket = null;
      this.fail(new Error('connection closed before the answer'));
    });
    this.socket = socket;
    return socket;
  }

  private onData(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const headEnd = this.buffered.indexOf(CRLF_CRLF);
    if (headEnd < 0) return;
    const head = this.buffered.toString('latin1', 0, headEnd);
    // A 204 has no body and may have no Content-Length (InfluxDB's answer to a write).
    const length = / 204 /.test(head.slice(8, 13)) ? ['', '0'] : CONTENT_LENGTH.exec(head);
    if (length === null) {
      this.fail(new Error(`answer without Content-Length: ${head.split('\r\n')[0]}`));
      this.close();
      return;
    }
    const bodyStart = headEnd + 4;
    const bodyEnd = bodyStart + Number(length[1]);
    if (this.buffered.length < bodyEnd) return;
    const status = Number(head.slice(9, 12));
    const body = this.buffered.subarray(bodyStart, bodyEnd);
    this.buffered = Buffer.alloc(0);
    if (CONNECTION_CLOSE.test(head)) this.close();
    this.settle({ status, accepted: acceptedOf(status, body) });
  }

  private settle(answer: PostAnswer): void {
    const p = this.pending;
    this.pending = null;
    if (this.timer) clearTimeout(this.timer);
    p?.resolve(answer);
  }

  private fail(err: Error): void {
    const p = this.pending;
    this.pending = null;
    if (this.timer) clearTimeout(this.timer);
    if (p) {
      this.close();
      p.reject(err);
    }
  }
}

/**
 * Up to `connections` keep-alive connections to one origin; a post waits for a free one. Posts of
 * the same path and body length share one request head.
 */
export class RawHttpClient {
  private readonly idle: RawConnection[] = [];
  private readonly all: RawConnection[] = [];
  private readonly waiting: Array<(c: RawConnection) => void> = [];
  private readonly heads = new Map<string, Buffer>();
  private readonly host: string;
  private readonly port: number;

  constructor(
    origin: string,
    private readonly connections: number,
    /** Content-Type of every request. */
    private readonly contentType = 'application/json',
  ) {
    const url = new URL(origin);
    this.host = url.hostname;
    this.port = Number(url.port);
  }

  async post(path: string, body: Buffer): Promise<PostAnswer> {
    const connection = await this.acquire();
    try {
      return await connection.post(this.head(path, body.length), body);
    } finally {
      this.release(connection);
    }
  }

  async close(): Promise<void> {
    for (const c of this.all) c.close();
  }

  /**
   * Opens every connection before a measured window: a burst of new connections at its start
   * would overflow the server's accept queue, and the SYNs retransmitted a second or three later
   * would be measured as request latency.
   */
  async connectAll(): Promise<void> {
    while (this.all.length < this.connections) {
      const c = new RawConnection(this.host, this.port);
      this.all.push(c);
      this.idle.push(c);
    }
    await Promise.all(this.all.map((c) => c.open()));
  }

  private head(path: string, length: number): Buffer {
    const key = `${path} ${length}`;
    let head = this.heads.get(key);
    if (head === undefined) {
      head = Buffer.from(
        `POST ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\n` +
          `Content-Type: ${this.contentType}\r\nContent-Length: ${length}\r\n\r\n`,
        'latin1',
      );
      this.heads.set(key, head);
    }
    return head;
  }

  private acquire(): Promise<RawConnection> | RawConnection {
    const free = this.idle.pop();
    if (free) return free;
    if (this.all.length < this.connections) {
      const c = new RawConnection(this.host, this.port);
      this.all.push(c);
      return c;
    }
    return new Promise<RawConnection>((resolve) => this.waiting.push(resolve));
  }

  private release(c: RawConnection): void {
    const next = this.waiting.shift();
    if (next) next(c);
    else this.idle.push(c);
  }
}
