import { OutcomesTally } from '../../../src/http/routes/outcomes-answer';
import { lossMapOf, lossMapsByMinute } from '../../../src/loss-map/loss-map';
import type { OutcomeName, OutcomeRow } from '../../../src/loss-map/outcome';

const MIN = 60_000;
const NOW = 1_000 * MIN;
const horizon = { now: NOW, horizonMs: 10 * MIN };
const noWait = (): Promise<void> => Promise.resolve();

/** Three rows a minute over 200 minutes, oldest first; some minutes leave pending to settle. */
const rows: OutcomeRow[] = Array.from({ length: 200 }, (_, m) => {
  const minute = NOW - (200 - m) * MIN;
  const row = (outcome: OutcomeName, count: number): OutcomeRow => ({
    minute,
    type: 'log',
    outcome,
    reason: outcome === 'sdk_dropped' ? 'buffer_full' : '',
    origin: 'sdk',
    count,
  });
  return [row('captured', 10), row('sdk_delivered', 9 - (m % 3)), row('stored', 9 - (m % 5))];
}).flat();

describe('OutcomesTally', () => {
  it.each([1, 2, 7, 500])(
    'fed pages of %d rows (minutes cut across pages) gives the map and the minutes of the whole read',
    async (pageRows) => {
      const tally = new OutcomesTally(horizon, true, noWait);
      for (let i = 0; i < rows.length; i += pageRows) await tally.add(rows.slice(i, i + pageRows));
      const answer = tally.answer();
      expect(answer.map).toEqual(lossMapOf(rows, horizon));
      expect(answer.minutes).toEqual(lossMapsByMinute(rows, horizon));
    },
  );

  it('without minutes answers the map alone; no rows, the empty map', async () => {
    const tally = new OutcomesTally(horizon, false, noWait);
    await tally.add(rows);
    expect(tally.answer()).toEqual({ map: lossMapOf(rows, horizon), minutes: null });
    expect(new OutcomesTally(horizon, false, noWait).answer()).toEqual({
      map: lossMapOf([], horizon),
      minutes: null,
    });
  });
});
