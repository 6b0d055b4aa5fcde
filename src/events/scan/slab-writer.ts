/*
 * Bytes written into shared slabs: the single pass's writers (a COPY line, a queue message
 * element) cut each output from one large buffer instead of allocating one per event. A slab is
 * replaced, never rewritten, when an output would not fit: an output cut from it stays valid for
 * as long as it is held (lanes release theirs in order, so a slab's memory goes with its last).
 */
export class SlabWriter {
  /** The slab being written. */
  buf: Buffer;
  /**
   * `buf` as a DataView, for the big-endian numbers of binary fields: its methods are loaded from
   * DataView's prototype, which optimized code inlines, where a Buffer method (`writeInt32BE`) is a
   * generic property load (V8's LoadIC builtin) on every call.
   */
  view: DataView;
  /** Where the next byte goes. */
  at = 0;
  /** End of the outputs already cut from `buf`. */
  private used = 0;

  /** @param slabBytes - size of each slab (bytes); an output larger than it gets a slab of its own. */
  constructor(private readonly slabBytes: number) {
    this.buf = Buffer.allocUnsafeSlow(slabBytes);
    this.view = viewOf(this.buf);
  }

  /** Starts an output; `room` bounds its size in bytes (writing past it is a bug of the caller). */
  begin(room: number): void {
    if (this.used + room > this.buf.length) {
      this.buf = Buffer.allocUnsafeSlow(Math.max(this.slabBytes, room));
      this.view = viewOf(this.buf);
      this.used = 0;
    }
    this.at = this.used;
  }

  /** Ends the output begun last: its bytes. */
  end(): Buffer {
    const out = this.buf.subarray(this.used, this.at);
    this.used = this.at;
    return out;
  }

  byte(c: number): void {
    this.buf[this.at++] = c;
  }

  /** A string of code units below 0x80, one byte each. */
  ascii(s: string): void {
    for (let k = 0; k < s.length; k++) this.buf[this.at++] = s.charCodeAt(k);
  }

  /** Bytes `start` to `end` of `text`, as they are. */
  raw(text: Uint8Array, start: number, end: number): void {
    if (end - start > 64) {
      this.buf.set(text.subarray(start, end), this.at);
      this.at += end - start;
      return;
    }
    for (let p = start; p < end; p++) this.buf[this.at++] = text[p] as number;
  }
}

/** A DataView of exactly the bytes of `b`. */
export function viewOf(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}
