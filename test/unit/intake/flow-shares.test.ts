import { FLOW_TAU_MS, FlowShares, MAX_FLOWS } from '../../../src/intake/flow-shares';

describe('flow table', () => {
  it('counts a new flow in the shared one while the table is full of busy flows, and takes it once they went idle', () => {
    const flows = new FlowShares();
    for (let i = 0; i < MAX_FLOWS; i++) flows.arrived(flows.flowOf(`app:a${i}`, 0), 100, 0);
    expect(flows.flowOf('app:new', 1)).toBe('');
    // Still busy a moment later: no sweep frees an entry.
    expect(flows.flowOf('app:new', FLOW_TAU_MS + 1)).toBe('');
    // Long idle: the next sweep (at most one per FLOW_TAU_MS) forgets them.
    expect(flows.flowOf('app:new', 20 * FLOW_TAU_MS)).toBe('app:new');
  });
});
