import { nanos, type Msg } from '@nats-io/nats-core';

/** Where a pulled message sits in its stream and how often it was delivered (from its reply subject). */
export interface DeliveryInfo {
  readonly stream: string;
  readonly streamSequence: number;
  /** 1 on the first delivery. */
  readonly deliveryCount: number;
  /** When the stream stored it (epoch ms, the NATS server's clock). */
  readonly storedAtMs: number;
}

const encoder = new TextEncoder();
const ACK = encoder.encode('+ACK');
const WORKING = encoder.encode('+WPI');

/**
 * Reads the delivery info of a JetStream message from its ack subject, in either form:
 * `$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>` (`ts`: when the stream
 * stored it, in nanoseconds since the epoch) or, with a domain and an
 * account hash, `$JS.ACK.<domain>.<hash>.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<ts>.<pending>.<token>`.
 * Null when `reply` is not one.
 */
export function parseDeliveryInfo(reply: string): DeliveryInfo | null {
  const t = reply.split('.');
  if (t[0] !== '$JS' || t[1] !== 'ACK') return null;
  const at = t.length === 9 ? 2 : t.length >= 11 ? 4 : -1;
  if (at < 0) return null;
  const stream = t[at] ?? '';
  const deliveryCount = Number(t[at + 2]);
  const streamSequence = Number(t[at + 3]);
  // Nanoseconds: past 2^53, but a double keeps them to well under a millisecond.
  const storedAtMs = Math.floor(Number(t[at + 5]) / 1e6);
  if (!stream || !Number.isSafeInteger(deliveryCount) || !Number.isSafeInteger(streamSequence)) return null;
  if (!Number.isFinite(storedAtMs)) return null;
  return { stream, streamSequence, deliveryCount, storedAtMs };
}

/**
 * A message of a durable pull consumer: its payload and the three answers a worker gives it, each
 * a plain publish to the message's ack subject (JetStream's ack protocol).
 */
export class PulledMessage {
  constructor(
    private readonly msg: Msg,
    readonly info: DeliveryInfo,
  ) {}

  get subject(): string {
    return this.msg.subject;
  }

  get data(): Uint8Array {
    return this.msg.data;
  }

  /** The value of header `name`, if the message has it. */
  header(name: string): string | undefined {
    return this.msg.headers?.get(name) || undefined;
  }

  /** Done: JetStream may delete it (work-queue retention). */
  ack(): void {
    this.msg.respond(ACK);
  }

  /** Hand it back for another delivery, after `delayMs` (milliseconds) when given. */
  nak(delayMs?: number): void {
    const body = delayMs === undefined ? '-NAK' : `-NAK ${JSON.stringify({ delay: nanos(delayMs) })}`;
    this.msg.respond(encoder.encode(body));
  }

  /** Still working on it: restarts its ack wait. */
  working(): void {
    this.msg.respond(WORKING);
  }
}
