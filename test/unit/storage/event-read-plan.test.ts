import {
  containsPattern,
  pageOf,
  planEventRead,
  scanBoundOf,
} from '../../../src/storage/layout/event-read-plan';
import type { TelemetryEvent } from '../../../src/events/types';

describe('how a page of events reads each table', () => {
  it('leads each table with one indexed equality and checks the rest row by row', () => {
    const plan = planEventRead({
      app: 'shop',
      name: 'n',
      env: 'prod',
      limit: 10,
      from: 5,
      before: { ts: 9, id: 'x' },
    });
    expect(plan).toEqual([
      {
        table: 'events',
        indexed: [
          { kind: 'equals', column: 'app', value: 'shop' },
          { kind: 'from', ts: 5 },
          { kind: 'before', ts: 9, id: 'x' },
        ],
        residual: [
          { kind: 'equals', column: 'name', value: 'n' },
          { kind: 'equals', column: 'env', value: 'prod' },
        ],
      },
      {
        // metric_samples has an index on name only: the app is checked row by row.
        table: 'metric_samples',
        indexed: [
          { kind: 'equals', column: 'name', value: 'n' },
          { kind: 'from', ts: 5 },
          { kind: 'before', ts: 9, id: 'x' },
        ],
        residual: [
          { kind: 'equals', column: 'app', value: 'shop' },
          { kind: 'equals', column: 'env', value: 'prod' },
        ],
      },
    ]);
  });

  it('reads one table for a type, and needs no type condition on metric_samples', () => {
    expect(planEventRead({ type: 'metric', limit: 1 }).map((r) => [r.table, r.indexed, r.residual])).toEqual([
      ['metric_samples', [], []],
    ]);
    expect(planEventRead({ type: 'error', app: 'a', limit: 1 })).toEqual([
      {
        table: 'events',
        indexed: [{ kind: 'equals', column: 'app', value: 'a' }],
        residual: [{ kind: 'equals', column: 'type', value: 'error' }],
      },
    ]);
  });

  it('reads a text through a table’s text index from its shortest length on, else row by row', () => {
    const text = (t: string) => ({ kind: 'text', pattern: containsPattern(t) });
    const plan = (t: string) =>
      planEventRead({ text: t, limit: 1 }, { events: 3 }).map((r) => [r.table, r.indexed, r.residual]);
    expect(plan('déjà')).toEqual([
      ['events', [text('déjà')], []],
      ['metric_samples', [], [text('déjà')]],
    ]);
    expect(plan('ab')).toEqual([
      ['events', [], [text('ab')]],
      ['metric_samples', [], [text('ab')]],
    ]);
  });

  it('escapes LIKE wildcards in text', () => {
    expect(containsPattern('100%_a\\b')).toBe('%100\\%\\_a\\\\b%');
  });

  it('stops a bounded page at the newest of the tables’ bounds; a full page continues after its last event', () => {
    expect(scanBoundOf([null, null])).toBeNull();
    expect(scanBoundOf([{ ts: 5, id: 'b' }, null, { ts: 5, id: 'c' }, { ts: 4, id: 'z' }])).toEqual({
      ts: 5,
      id: 'c',
    });
    const e = (ts: number, id: string) => ({ ts, id }) as TelemetryEvent;
    expect(pageOf([e(9, 'a'), e(8, 'b')], 2, { ts: 1, id: 'x' }).next).toEqual({ ts: 8, id: 'b' });
    expect(pageOf([e(9, 'a')], 2, { ts: 1, id: 'x' }).next).toEqual({ ts: 1, id: 'x' });
    expect(pageOf([e(9, 'a')], 2, null).next).toBeNull();
  });
});
