import type { Clock } from '../../../src/clock';
import { BoundedLane } from '../../../src/lanes/lane';
import { LaneSink } from '../../../src/lanes/lane-sink';
import type { StorageRow } from '../../../src/storage/port';
import { DrainRate } from '../../../src/writer/drain-rate';

/** Event limits small enough for the intake tests to reach. */
export const TEST_LIMITS = {
  maxAttributes: 8,
  maxAttributeKeyLength: 64,
  maxStringLength: 256,
  maxStackLength: 1024,
  maxNameLength: 128,
  maxSourceLength: 128,
  maxAgeMs: 86_400_000,
  maxFutureMs: 60_000,
};

/** Two lanes of the given sizes behind a lane sink that acknowledges when queued; nothing drains them. */
export function testLanes(
  clock: Clock,
  lanes: { readonly errorEvents: number; readonly standardEvents: number; readonly maxBytes: number },
) {
  const errorLane = new BoundedLane('error', { maxEvents: lanes.errorEvents, maxBytes: lanes.maxBytes });
  const standardLane = new BoundedLane('standard', {
    maxEvents: lanes.standardEvents,
    maxBytes: lanes.maxBytes,
  });
  const sink = new LaneSink({
    errorLane,
    standardLane,
    writer: { notify: () => undefined, drainRate: new DrainRate(clock) },
    ack: 'queued',
    ackTimeoutMs: 1000,
    storageUp: () => true,
    toRow: (event) => event as unknown as StorageRow,
  });
  return { sink, errorLane, standardLane };
}
