import { JOB_LOCK_KEYS, JOB_NAMES, LOCK_NAMESPACE, lockKeyOf } from '../../../src/scheduler/lock-keys';

const INT4_MIN = -(2n ** 31n);
const INT4_MAX = 2n ** 31n - 1n;

describe('scheduler lock keys', () => {
  it('are pinned: changing them would let old and new versions take different locks during an upgrade', () => {
    expect(JOB_LOCK_KEYS).toEqual({
      downsample: 9108708964837632706n,
      purge: 2324191532590515825n,
      partitions: -9055434936326589593n,
      compact_outcomes: 4536068042664240318n,
      merge_metric_blocks: 4547646209631264672n,
    });
  });

  it('are namespaced, distinct, signed 64-bit, and outside the range of hashtext() keys', () => {
    expect(LOCK_NAMESPACE).toBe('sluice:scheduler:');
    const keys = JOB_NAMES.map((name) => JOB_LOCK_KEYS[name]);
    expect(new Set(keys).size).toBe(JOB_NAMES.length);
    for (const key of keys) {
      expect(key).toBe(BigInt.asIntN(64, key));
      expect(key < INT4_MIN || key > INT4_MAX).toBe(true);
    }
  });

  it('derive from the name only', () => {
    expect(lockKeyOf('downsample')).toBe(JOB_LOCK_KEYS.downsample);
    expect(lockKeyOf('downsample ')).not.toBe(JOB_LOCK_KEYS.downsample);
  });
});
