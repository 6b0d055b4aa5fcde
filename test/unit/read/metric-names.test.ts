import { metricNames, storedNames, writtenName } from '../../../src/read/metric-names';

describe('metric names', () => {
  it('reads a metric with its SDK summaries', () => {
    expect(storedNames('render.frame_drop')).toEqual(['render.frame_drop', 'render.frame_drop_summary']);
  });

  it('lists a summary stored as <name>_summary under <name>; a sample keeps its stored name', () => {
    expect(writtenName({ name: 'render.frame_drop_summary', kind: 'summary' })).toBe('render.frame_drop');
    expect(writtenName({ name: 'queue_summary', kind: 'sample' })).toBe('queue_summary');
    expect(writtenName({ name: 'http.duration', kind: 'summary' })).toBe('http.duration');
    expect(writtenName({ name: '_summary', kind: 'summary' })).toBe('_summary');
    expect(writtenName({ name: 'x_summary', kind: null })).toBe('x_summary');
  });

  it('merges series by written name, with kinds and apps sorted', () => {
    expect(
      metricNames([
        { name: 'render.frame_drop_summary', app: 'web', kind: 'summary' },
        { name: 'render.frame_drop', app: 'ios', kind: 'sample' },
        { name: 'cpu', app: 'web', kind: null },
        { name: 'render.frame_drop', app: 'web', kind: 'sample' },
      ]),
    ).toEqual([
      { name: 'cpu', kinds: [], apps: ['web'] },
      { name: 'render.frame_drop', kinds: ['sample', 'summary'], apps: ['ios', 'web'] },
    ]);
  });
});
