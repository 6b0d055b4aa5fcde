import { randomFillSync } from 'node:crypto';

/** Random bytes drawn in bulk: one syscall per 4096 ids instead of one per id. */
const POOL_IDS = 4096;
const pool = Buffer.alloc(16 * POOL_IDS);
let next = POOL_IDS;

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * A UUID v7 (RFC 9562 §5.7): 48-bit Unix milliseconds, then random bits. Ids are unique across
 * runs of the bench (74 random bits each), so every event of a workload is a new row.
 */
export function uuidV7(nowMs: number): string {
  if (next === POOL_IDS) {
    randomFillSync(pool);
    next = 0;
  }
  const b = pool.subarray(next * 16, next * 16 + 16);
  next++;
  let ms = nowMs;
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  b[6] = 0x70 | ((b[6] as number) & 0x0f);
  b[8] = 0x80 | ((b[8] as number) & 0x3f);
  const h = (i: number): string => HEX[b[i] as number] as string;
  return (
    h(0) +
    h(1) +
    h(2) +
    h(3) +
    '-' +
    h(4) +
    h(5) +
    '-' +
    h(6) +
    h(7) +
    '-' +
    h(8) +
    h(9) +
    '-' +
    h(10) +
    h(11) +
    h(12) +
    h(13) +
    h(14) +
    h(15)
  );
}
