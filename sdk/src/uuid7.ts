/**
 * UUIDv7 (RFC 9562 §5.7): 48-bit Unix milliseconds, version 7, a 12-bit
 * counter in `rand_a` (method 1 of §6.2, so ids made in the same
 * millisecond still sort in creation order), variant 10, 62 random bits.
 * The ids index well on the collector: keys arrive roughly in time order.
 */

/** Fills a byte array with random bytes. */
export type RandomFill = (bytes: Uint8Array) => void;

const HEX: readonly string[] = Array.from({ length: 256 }, (_, i) => (i + 0x100).toString(16).slice(1));
/** Random bytes are drawn in blocks: one `getRandomValues` call per ~400 ids keeps capture cheap. */
const POOL_BYTES = 4096;
const COUNTER_MAX = 0xfff;

/** `crypto.getRandomValues` where the runtime has it (browsers, Node), else `Math.random`. */
export const defaultRandomFill: RandomFill = (bytes) => {
  const c = (globalThis as { crypto?: { getRandomValues?: (b: Uint8Array) => unknown } }).crypto;
  if (c && typeof c.getRandomValues === 'function') {
    c.getRandomValues(bytes);
    return;
  }
  for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
};

export class Uuid7Generator {
  private readonly pool = new Uint8Array(POOL_BYTES);
  private pos = POOL_BYTES;
  private lastMs = -1;
  private counter = 0;
  /** `xxxxxxxx-xxxx-` of `lastMs`: ids of one millisecond share it, so it is built once. */
  private prefix = '';

  constructor(private readonly fill: RandomFill = defaultRandomFill) {}

  /**
   * A new id whose time field is `ms`, or the last id's millisecond when the
   * clock went backwards or the counter overflowed: ids never go back in order.
   */
  next(ms: number): string {
    let t = Math.max(0, Math.floor(ms));
    if (t > this.lastMs) {
      // Seed the counter with 11 random bits: at least 2048 ids fit in one millisecond.
      this.counter = ((this.byte() & 0x07) << 8) | this.byte();
    } else {
      t = this.lastMs;
      this.counter++;
      if (this.counter > COUNTER_MAX) {
        t++;
        this.counter = 0;
      }
    }
    if (t !== this.lastMs || this.prefix === '') {
      const high = Math.floor(t / 0x100000000); // top 16 of the 48 bits
      const low = t >>> 0;
      this.prefix =
        HEX[(high >>> 8) & 0xff]! +
        HEX[high & 0xff]! +
        HEX[low >>> 24]! +
        HEX[(low >>> 16) & 0xff]! +
        '-' +
        HEX[(low >>> 8) & 0xff]! +
        HEX[low & 0xff]! +
        '-';
    }
    this.lastMs = t;
    return (
      this.prefix +
      HEX[0x70 | (this.counter >>> 8)]! +
      HEX[this.counter & 0xff]! +
      '-' +
      HEX[0x80 | (this.byte() & 0x3f)]! +
      HEX[this.byte()]! +
      '-' +
      HEX[this.byte()]! +
      HEX[this.byte()]! +
      HEX[this.byte()]! +
      HEX[this.byte()]! +
      HEX[this.byte()]! +
      HEX[this.byte()]!
    );
  }

  private byte(): number {
    if (this.pos >= POOL_BYTES) {
      this.fill(this.pool);
      this.pos = 0;
    }
    return this.pool[this.pos++]!;
  }
}

/** The Unix milliseconds encoded in a UUIDv7. */
export function uuid7Time(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}
