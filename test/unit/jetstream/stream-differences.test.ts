import { streamDifferences, type ManagedStreamConfig } from '../../../src/jetstream/stream-differences';

const WANTED = {
  name: 'SLUICE_EVENTS',
  subjects: ['sluice.events.error', 'sluice.events.standard'],
  retention: 'workqueue',
  storage: 'file',
  discard: 'new',
  max_bytes: 1024,
  max_age: 86_400_000_000_000,
  duplicate_window: 120_000_000_000,
  num_replicas: 1,
} as ManagedStreamConfig;

describe('streamDifferences', () => {
  it('finds nothing when the stream has the settings (subjects in any order)', () => {
    expect(streamDifferences({ ...WANTED, subjects: [...WANTED.subjects].reverse() }, WANTED)).toEqual({
      update: {},
      kept: {},
    });
  });

  it('updates limits and subjects to the settings', () => {
    const existing = { ...WANTED, max_bytes: 2048, subjects: ['sluice.events.error'] };
    expect(streamDifferences(existing, WANTED)).toEqual({
      update: {
        max_bytes: { stream: 2048, setting: 1024 },
        subjects: { stream: ['sluice.events.error'], setting: WANTED.subjects },
      },
      kept: {},
    });
  });

  it('keeps the replicas of an existing stream, either way, and reports them', () => {
    expect(streamDifferences({ ...WANTED, num_replicas: 3 }, WANTED)).toEqual({
      update: {},
      kept: { num_replicas: { stream: 3, setting: 1 } },
    });
    expect(streamDifferences(WANTED, { ...WANTED, num_replicas: 5 }).kept).toEqual({
      num_replicas: { stream: 1, setting: 5 },
    });
  });

  it('reads an unset replica count as 1', () => {
    const { num_replicas: _unset, ...existing } = WANTED;
    expect(streamDifferences(existing, WANTED)).toEqual({ update: {}, kept: {} });
  });
});
