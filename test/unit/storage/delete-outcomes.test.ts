import { lossMapOf } from '../../../src/loss-map/loss-map';
import type { OutcomeCount, OutcomeRow } from '../../../src/loss-map/outcome';
import { pendingCarriedOver } from '../../../src/storage/layout/delete-outcomes';

const row = (over: Partial<OutcomeRow>): OutcomeRow => ({
  minute: 60_000,
  type: 'metric',
  outcome: 'accepted',
  reason: '',
  origin: 'direct',
  count: 1,
  ...over,
});
const strip = ({ app: _app, ...r }: OutcomeCount): OutcomeRow => r;

describe('what a deletion keeps of the loss map', () => {
  it('nothing when nothing was pending', () => {
    expect(
      pendingCarriedOver('x', [row({ count: 5 }), row({ outcome: 'stored', origin: '', count: 5 })]),
    ).toEqual([]);
  });

  it('per minute and type, what was pending on each side; counts arriving later bring it to 0', () => {
    const removed = [
      // Accepted and flushed, not stored yet (in a lane): stored after the deletion.
      row({ count: 3 }),
      // Stored, its accepted count still in a recorder's memory.
      row({ outcome: 'stored', origin: '', count: 2, minute: 120_000 }),
      // An SDK's events: captured and delivered, one still in its buffer.
      row({ outcome: 'captured', origin: 'sdk', count: 4, type: 'log' }),
      row({ outcome: 'sdk_delivered', origin: 'sdk', count: 3, type: 'log' }),
      row({ outcome: 'stored', origin: '', count: 3, type: 'log' }),
      // Throttled and rejected events are decided: nothing of them is carried.
      row({ outcome: 'throttled', reason: 'rate_limited', count: 9 }),
      row({ outcome: 'rejected', reason: 'name_invalid', count: 1 }),
    ];
    const kept = pendingCarriedOver('x', removed);
    expect(kept).toEqual([
      {
        app: 'x',
        minute: 60_000,
        type: 'metric',
        outcome: 'accepted',
        reason: '',
        origin: 'direct',
        count: 3,
      },
      {
        app: 'x',
        minute: 120_000,
        type: 'metric',
        outcome: 'accepted',
        reason: '',
        origin: 'direct',
        count: -2,
      },
      { app: 'x', minute: 60_000, type: 'log', outcome: 'captured', reason: '', origin: 'sdk', count: 1 },
    ]);
    const later = [
      row({ outcome: 'stored', origin: '', count: 3 }),
      row({ count: 2, minute: 120_000 }),
      row({ outcome: 'sdk_delivered', origin: 'sdk', count: 1, type: 'log' }),
      row({ outcome: 'stored', origin: '', count: 1, type: 'log' }),
    ];
    const map = lossMapOf([...kept.map(strip), ...later]);
    expect(map.pending).toEqual({ sdk: 0, pipeline: 0 });
    // What is left describes the rows that stayed: the 3 stored after, and the SDK's last one.
    expect({ generated: map.generated, stored: map.stored }).toEqual({ generated: 4, stored: 4 });
  });
});
