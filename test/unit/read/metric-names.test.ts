import { storedNames, writtenName, writtenNames } from '../../../src/read/metric-names';
import type { StoredMetricName } from '../../../src/storage/port';

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

  it('merges a page of stored names by written name, with kinds and apps sorted', async () => {
    const stored = (name: string, kind: StoredMetricName['kind'], apps: string[]): StoredMetricName => ({
      name,
      kind,
      apps,
      appsCapped: false,
    });
    const inWindow = new Map([
      ['render.frame_drop', stored('render.frame_drop', 'sample', ['web', 'ios'])],
      ['render.frame_drop_summary', stored('render.frame_drop_summary', 'summary', ['web'])],
      ['queue_summary_summary', stored('queue_summary_summary', 'summary', ['ios'])],
    ]);
    const probed: string[] = [];
    const page = await writtenNames(
      [
        stored('cpu', null, ['web']),
        stored('render.frame_drop', 'sample', ['web', 'ios']),
        // Listed with render.frame_drop (an earlier entry), not again.
        stored('render.frame_drop_summary', 'summary', ['web']),
        // Summaries whose base name has no data in the window: listed under the base name.
        stored('lonely_summary', 'summary', ['web']),
        // A metric named x_summary with values keeps its name, and its own summaries join it.
        stored('queue_summary', 'sample', ['ios']),
      ],
      async (name) => {
        probed.push(name);
        return inWindow.get(name) ?? null;
      },
    );
    expect(page).toEqual([
      { name: 'cpu', kinds: [], apps: ['web'], appsCapped: false },
      { name: 'render.frame_drop', kinds: ['sample', 'summary'], apps: ['ios', 'web'], appsCapped: false },
      { name: 'lonely', kinds: ['summary'], apps: ['web'], appsCapped: false },
      { name: 'queue_summary', kinds: ['sample', 'summary'], apps: ['ios'], appsCapped: false },
    ]);
    expect(probed).toContain('render.frame_drop');
  });
});
