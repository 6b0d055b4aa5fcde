import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { latin1Text, PUBLIC_SLICES, utf8Text } from '../../../src/events/scan/byte-range';
import type { BenchContext } from '../context';
import { figure, round } from '../rows';
import type { BenchRow } from '../types';
import type { RequestBody } from '../workload';

const SUITE = 'internals';
const ROUNDS = 5;
const run = promisify(execFile);

/** Start and end of every JSON string in the bodies (between two quotes): what the single pass slices. */
function stringRanges(bodies: readonly RequestBody[]): Array<[Buffer, number, number]> {
  const ranges: Array<[Buffer, number, number]> = [];
  for (const b of bodies) {
    for (let open = b.bytes.indexOf(34); open >= 0;) {
      const close = b.bytes.indexOf(34, open + 1);
      if (close < 0) break;
      ranges.push([b.bytes, open + 1, close]);
      open = b.bytes.indexOf(34, close + 1);
    }
  }
  return ranges;
}

/** µs per event to slice every range as Latin-1 and as UTF-8 with `latin1` and `utf8`. */
function sliceAll(
  ranges: ReadonlyArray<[Buffer, number, number]>,
  events: number,
  latin1: (text: Buffer, start: number, end: number) => string,
  utf8: (text: Buffer, start: number, end: number) => string,
): number {
  const t = performance.now();
  let length = 0;
  for (const [text, start, end] of ranges)
    length += latin1(text, start, end).length + utf8(text, start, end).length;
  if (length < 0) throw new Error('unreachable');
  return ((performance.now() - t) * 1000) / events;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** The single pass's µs per event in a child process, String.prototype a dictionary or made fast. */
async function childPass(mode: 'dictionary' | 'fast', events: number): Promise<number> {
  const child = path.join(__dirname, '..', 'string-prototype-child.js');
  const { stdout } = await run(process.execPath, [child, mode, String(events)]);
  return (JSON.parse(stdout) as { usPerEvent: number }).usPerEvent;
}

/**
 * What each reliance on V8 and Node internals is worth, on the bench's realistic bodies:
 * byte-range's internal `latin1Slice`/`utf8Slice` against its public fallback (every JSON string
 * of the bodies sliced both ways, alternating rounds), and the single pass with String.prototype
 * left a dictionary (as loading ioredis leaves it) against made fast again (child processes,
 * alternating).
 */
export async function runInternalsBench(ctx: BenchContext): Promise<BenchRow[]> {
  const bodies = ctx.batches.bodies.slice(0, ctx.options.quick ? 200 : 1000);
  const events = bodies.reduce((n, b) => n + b.events, 0);
  const ranges = stringRanges(bodies);
  const native: number[] = [];
  const fallback: number[] = [];
  const publicLatin1 = (text: Buffer, start: number, end: number) =>
    PUBLIC_SLICES.latin1.call(text, start, end);
  const publicUtf8 = (text: Buffer, start: number, end: number) => PUBLIC_SLICES.utf8.call(text, start, end);
  for (let r = 0; r < ROUNDS; r++) {
    ctx.progress(`internals: slices, round ${r + 1} of ${ROUNDS}`);
    native.push(sliceAll(ranges, events, latin1Text, utf8Text));
    fallback.push(sliceAll(ranges, events, publicLatin1, publicUtf8));
  }
  const dictionary: number[] = [];
  const fast: number[] = [];
  const childEvents = ctx.options.quick ? 10_000 : 40_000;
  for (let r = 0; r < 3; r++) {
    ctx.progress(`internals: String.prototype, round ${r + 1} of 3`);
    dictionary.push(await childPass('dictionary', childEvents));
    fast.push(await childPass('fast', childEvents));
  }
  const fallbackName = 'byte-range slices, public fallback (Buffer view + toString)';
  const dictionaryName = 'single pass, String.prototype a dictionary (ioredis loaded)';
  const slicesUs = median(native);
  const fastUs = median(fast);
  return [
    figure(SUITE, fallbackName, round(median(fallback)), 'µs/event', { strings: ranges.length }),
    {
      ...figure(
        SUITE,
        "byte-range slices, Node's internal latin1Slice/utf8Slice",
        round(slicesUs),
        'µs/event',
      ),
      baseline: fallbackName,
      ratio: round(slicesUs / median(fallback)),
    },
    figure(SUITE, dictionaryName, round(median(dictionary)), 'µs/event'),
    {
      ...figure(SUITE, 'single pass, String.prototype made fast again', round(fastUs), 'µs/event'),
      baseline: dictionaryName,
      ratio: round(fastUs / median(dictionary)),
    },
  ];
}
