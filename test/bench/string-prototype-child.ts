/**
 * One measurement of the `internals` suite, in a process of its own: the single pass's CPU per
 * event with `String.prototype` turned into a dictionary the way ioredis 6 does it (a class
 * extending String), then, with `fast` as argument, made fast again by keepStringPrototypeFast.
 * Prints the median µs per event of its rounds.
 */
import { keepStringPrototypeFast } from '../../src/runtime/fast-string-prototype';
import { singlePass, type PassCount } from './suites/single-pass';
import { BodyCorpus, EventGenerator } from './workload';

const ROUNDS = 5;
const bodies = new BodyCorpus(new EventGenerator(1), 100).ensure(Number(process.argv[3] ?? 20_000)).bodies;
const events = bodies.reduce((n, b) => n + b.events, 0);

// What ioredis 6's `class VerbatimString extends String` does to the prototype, after every import.
class VerbatimString extends String {}
void VerbatimString;
if (process.argv[2] === 'fast') keepStringPrototypeFast();

const now = Date.now();
const times: number[] = [];
for (let r = 0; r < ROUNDS + 1; r++) {
  const count: PassCount = { fast: 0, slow: 0, fallbackRequests: 0 };
  const t = performance.now();
  singlePass(bodies, now, count);
  if (r > 0) times.push(((performance.now() - t) * 1000) / events);
}
times.sort((a, b) => a - b);
process.stdout.write(`${JSON.stringify({ usPerEvent: times[Math.floor(times.length / 2)] })}\n`);
