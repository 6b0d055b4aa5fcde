import { createInbox, headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/nats-core';

/** How one publish ended. `stored` includes duplicates JetStream dropped (already stored). */
export type PublishResult =
  | { readonly kind: 'stored'; readonly duplicate: boolean }
  /** JetStream refused it: `errCode` is its API error code (10077: stream full), when it gave one. */
  | { readonly kind: 'refused'; readonly errCode: number | null; readonly description: string }
  /** No stream listens on the subject (503 no responders): the stream is missing or JetStream is off. */
  | { readonly kind: 'no_stream' }
  | { readonly kind: 'timeout' }
  /** The connection would not take the message (closed). */
  | { readonly kind: 'error'; readonly error: Error };

export interface PublishMessage {
  readonly data: Uint8Array;
  /** `Nats-Msg-Id`: JetStream drops a repeat within the stream's duplicate window. */
  readonly msgId: string;
  /** Further headers of the message. */
  readonly headers?: Readonly<Record<string, string>>;
}

const decoder = new TextDecoder();

/** Reads a JetStream publish ack (`{"stream","seq","duplicate"?}` or `{"error":{…}}`). */
function parseAck(m: Msg): PublishResult {
  // A status message without payload: 503 = no responders (nothing stores this subject).
  if (m.headers?.code === 503) return { kind: 'no_stream' };
  let doc: { error?: { err_code?: number; description?: string }; duplicate?: boolean; seq?: number };
  try {
    doc = JSON.parse(decoder.decode(m.data)) as typeof doc;
  } catch {
    return { kind: 'refused', errCode: null, description: 'unreadable publish ack' };
  }
  if (doc.error) {
    return {
      kind: 'refused',
      errCode: typeof doc.error.err_code === 'number' ? doc.error.err_code : null,
      description: doc.error.description ?? 'refused',
    };
  }
  return typeof doc.seq === 'number'
    ? { kind: 'stored', duplicate: doc.duplicate === true }
    : { kind: 'refused', errCode: null, description: 'publish ack without a sequence' };
}

/**
 * JetStream publishing without a round trip per message, as nats.go's `PublishAsync` does: every
 * message goes out at once with its own reply subject under one inbox, one subscription collects
 * the acks, and one timer per call bounds the wait. (`JetStreamClient.publish` sets up a request, a promise and a
 * timer per message.)
 *
 * The caller bounds how many acks are pending (`JetStreamSink`); this class only keeps one map
 * entry per message in flight, removed on its ack or at its call's timeout.
 */
export class AsyncPublisher {
  private readonly prefix = createInbox();
  private readonly waiting = new Map<string, (outcome: PublishResult) => void>();
  private readonly sub: Subscription;
  private nextToken = 0;

  constructor(private readonly nc: NatsConnection) {
    this.sub = nc.subscribe(`${this.prefix}.*`, {
      callback: (err, m) => {
        if (err) return;
        const token = m.subject.slice(this.prefix.length + 1);
        const settle = this.waiting.get(token);
        if (!settle) return; // its call timed out already
        this.waiting.delete(token);
        settle(parseAck(m));
      },
    });
  }

  /** Acks awaited, over all calls in flight. */
  get pending(): number {
    return this.waiting.size;
  }

  /**
   * Publishes every message to `subject` and resolves, in order, how each ended: once every ack
   * arrived or `timeoutMs` (milliseconds) passed, whichever comes first. Never rejects.
   */
  publishAll(
    subject: string,
    messages: readonly PublishMessage[],
    timeoutMs: number,
  ): Promise<PublishResult[]> {
    const outcomes = new Array<PublishResult | undefined>(messages.length);
    const tokens: string[] = [];
    let open = messages.length;
    return new Promise<PublishResult[]>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        // A for loop, not map: `map` skips the holes that unanswered publishes leave.
        const all: PublishResult[] = [];
        for (let i = 0; i < messages.length; i++) all.push(outcomes[i] ?? { kind: 'timeout' });
        resolve(all);
      };
      const timer = setTimeout(() => {
        for (const t of tokens) this.waiting.delete(t);
        finish();
      }, timeoutMs);
      messages.forEach((message, i) => {
        const token = (this.nextToken++).toString(36);
        const settle = (outcome: PublishResult): void => {
          outcomes[i] = outcome;
          if (--open === 0) finish();
        };
        const h = headers();
        h.set('Nats-Msg-Id', message.msgId);
        if (message.headers) for (const [k, v] of Object.entries(message.headers)) h.set(k, v);
        try {
          this.waiting.set(token, settle);
          tokens.push(token);
          this.nc.publish(subject, message.data, { reply: `${this.prefix}.${token}`, headers: h });
        } catch (err) {
          this.waiting.delete(token);
          settle({ kind: 'error', error: err instanceof Error ? err : new Error(String(err)) });
        }
      });
      if (messages.length === 0) finish();
    });
  }

  /** Stops listening for acks; calls in flight end at their timeout. Idempotent. */
  close(): void {
    if (!this.sub.isClosed()) this.sub.unsubscribe();
  }
}
