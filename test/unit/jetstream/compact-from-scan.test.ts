import fc from 'fast-check';
import { RequestScan } from '../../../src/events/scan/scan-request';
import type { TelemetryEvent } from '../../../src/events/types';
import { validateEvent } from '../../../src/events/validate';
import { compactFromScan } from '../../../src/jetstream/compact-from-scan';
import { coalescedMessage, encodedEvents, encodeEvents } from '../../../src/jetstream/event-batches';
import { decodeEvents } from '../../../src/jetstream/event-codec';
import { bodyArbitrary, NOW, SMALL_LIMITS } from '../storage/single-pass-bodies';

// An event sent without an id gets a random one on each path: the same one here, so rows compare.
jest.mock('../../../src/events/assigned-id', () => ({
  assignedEventId: () => '0190f3c2-0000-7000-8000-00000000abcd',
}));

describe('message elements written by the single pass', () => {
  it('decode to the events the typed path would publish, in messages with the same id', () => {
    let fast = 0;
    fc.assert(
      fc.property(bodyArbitrary, (body) => {
        const scan = RequestScan.open(body, SMALL_LIMITS, NOW, 50, () => undefined);
        if (scan === null) return;
        const written: Array<{ id: string; ts: number; element: Uint8Array }> = [];
        const typed: TelemetryEvent[] = [];
        scan.step(1000, {
          fast(f) {
            fast++;
            written.push({ id: scan.idOf(f), ts: f.ts, element: compactFromScan(body, f) });
            const raw = JSON.parse(body.toString('utf8', f.spanStart, f.spanEnd)) as unknown;
            const v = validateEvent(raw, SMALL_LIMITS, NOW);
            if (!v.ok)
              throw new Error(`the single pass took an event validation refuses: ${v.rejection.reason}`);
            typed.push(v.event);
          },
          slow() {},
        });
        if (written.length === 0) return;
        const fromScan = coalescedMessage('standard', [encodedEvents(written)]);
        const fromTyped = coalescedMessage('standard', [encodeEvents(typed)]);
        expect(fromScan.msgId).toBe(fromTyped.msgId);
        expect(decodeEvents(fromScan.data)).toEqual(decodeEvents(fromTyped.data));
      }),
      { numRuns: 300 },
    );
    expect(fast).toBeGreaterThan(100);
  });
});
