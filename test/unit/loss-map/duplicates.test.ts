import { countDuplicates, type WrittenEvent } from '../../../src/loss-map/duplicates';
import type { OutcomeCount } from '../../../src/loss-map/outcome';
import { lossMapOf } from '../../../src/loss-map/loss-map';

const MIN = 60_000;
const written = (n: number, e: Partial<WrittenEvent> = {}): WrittenEvent[] =>
  Array.from({ length: n }, () => ({ app: 'a', ts: MIN + 5, type: 'log', origin: 'direct', ...e }));

function counted(events: WrittenEvent[], stored: Parameters<typeof countDuplicates>[2]): OutcomeCount[] {
  const out: OutcomeCount[] = [];
  countDuplicates((c) => out.push(c), events, stored);
  return out;
}

describe('duplicates counted after a write (loss-map/duplicates.ts)', () => {
  it('counts what a write skipped per (app, minute, type), nothing where every row went in', () => {
    const events = [...written(3), ...written(2, { type: 'metric' }), ...written(1, { ts: 2 * MIN })];
    expect(
      counted(events, [
        { app: 'a', minute: MIN, type: 'log', count: 1 },
        { app: 'a', minute: MIN, type: 'metric', count: 2 },
        { app: 'a', minute: 2 * MIN, type: 'log', count: 1 },
      ]),
    ).toEqual([
      {
        app: 'a',
        minute: MIN,
        type: 'log',
        outcome: 'duplicate',
        reason: 'duplicate',
        origin: 'direct',
        count: 2,
      },
    ]);
  });

  it('a group with no row stored is all duplicates; a mixed group charges the direct events first', () => {
    const events = [...written(2), ...written(3, { origin: 'sdk' })];
    expect(counted(events, [{ app: 'a', minute: MIN, type: 'log', count: 1 }])).toEqual([
      {
        app: 'a',
        minute: MIN,
        type: 'log',
        outcome: 'duplicate',
        reason: 'duplicate',
        origin: 'direct',
        count: 2,
      },
      {
        app: 'a',
        minute: MIN,
        type: 'log',
        outcome: 'duplicate',
        reason: 'duplicate',
        origin: 'sdk',
        count: 2,
      },
    ]);
  });

  it('closes a direct sender’s resend in the identity; an SDK’s copy is not counted again', () => {
    const m = lossMapOf([
      { minute: MIN, type: 'log', outcome: 'accepted', reason: '', origin: 'direct', count: 8 },
      { minute: MIN, type: 'log', outcome: 'stored', reason: '', origin: '', count: 4 },
      { minute: MIN, type: 'log', outcome: 'duplicate', reason: 'duplicate', origin: 'direct', count: 4 },
      { minute: MIN, type: 'log', outcome: 'duplicate', reason: 'duplicate', origin: 'sdk', count: 3 },
    ]);
    expect(m).toMatchObject({ generated: 8, stored: 4, lost: 4, pending: { sdk: 0, pipeline: 0 } });
    expect(m.losses.storage).toEqual({ duplicate: 4 });
  });
});
