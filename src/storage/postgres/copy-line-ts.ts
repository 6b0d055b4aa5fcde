import { indexOfByte } from '../../events/scan/byte-range';

/*
 * The `ts` field of a COPY line of `events` (the second field, after the id: copy-encoding.ts,
 * copy-line-from-scan.ts), read without making a string. Every byte of it is checked: a line whose
 * ts is not a decimal integer is not a row of ours, and nothing must be derived from it.
 */

const TAB = 0x09;
const MINUS = 0x2d;
const DIGIT_0 = 0x30;

/** Reads lines' ts fields into its own fields, so that reading one allocates nothing. */
export class LineTimestamp {
  /** The ts of the last line read (epoch milliseconds). */
  ts = 0;
  /** Index of the tab ending the ts field of the last line read. */
  end = 0;

  read(line: Buffer): this {
    let k = indexOfByte(line, TAB, 0);
    if (k < 0) throw new Error('a COPY line of fewer fields than its table has');
    k++;
    const negative = line[k] === MINUS;
    if (negative) k++;
    let ts = 0;
    for (let c = line[k]; c !== TAB; c = line[++k]) {
      const digit = (c ?? -1) - DIGIT_0;
      if (!(digit >= 0 && digit <= 9)) throw new Error('a COPY line whose ts is not an integer');
      ts = ts * 10 + digit;
    }
    this.ts = negative ? -ts : ts;
    this.end = k;
    return this;
  }
}
