import { errorFingerprint, messageTemplate } from '../../../src/storage/layout/error-fingerprint';
import { ErrorGrouper, groupErrors, groupErrorsYielding } from '../../../src/read/error-groups';

describe('message templates', () => {
  it.each([
    ['order 1234 not found', 'order <num> not found'],
    ['timeout after 30.5s', 'timeout after 30.5s'],
    ['timeout after 30.5 s', 'timeout after <num> s'],
    ['user 0190f3c2-7f00-7000-8000-000000000001 locked', 'user <uuid> locked'],
    ['bad hash deadbeef01 at 0x7ffe12', 'bad hash <hex> at <hex>'],
    [
      "Cannot read properties of undefined (reading 'total')",
      'Cannot read properties of undefined (reading <str>)',
    ],
    ['key "a b" missing', 'key <str> missing'],
    ['GET /orders/77 answered 503 (v2 api)', 'GET /orders/<num> answered <num> (v2 api)'],
    ['retry 3.', 'retry <num>.'],
    ['  spaces\n\tfolded  ', 'spaces folded'],
  ])('%j → %j', (message, template) => {
    expect(messageTemplate(message)).toBe(template);
  });

  it('fingerprints kind and template together, stably', () => {
    const a = errorFingerprint('NotFound', 'order <num> not found');
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(errorFingerprint('NotFound', 'order <num> not found')).toBe(a);
    expect(errorFingerprint('Other', 'order <num> not found')).not.toBe(a);
    expect(errorFingerprint(null, 'order <num> not found')).not.toBe(a);
  });
});

describe('groupErrors', () => {
  const row = (
    app: string,
    kind: string | null,
    message: string,
    count: number,
    firstTs: number,
    lastTs: number,
    lastId: string,
  ) => ({
    app,
    kind,
    message,
    count,
    firstTs,
    lastTs,
    lastId,
  });

  it('merges messages of one template and kind across apps; newest group first', () => {
    const groups = groupErrors([
      row('shop', 'NotFound', 'order 1 not found', 2, 10, 20, 'a'),
      row('blog', 'NotFound', 'order 22 not found', 1, 5, 30, 'b'),
      row('shop', 'Payment', 'card declined', 5, 1, 25, 'c'),
      row('shop', null, 'order 3 not found', 1, 7, 7, 'd'),
    ]);
    expect(
      groups.map((g) => [g.kind, g.template, g.count, g.firstSeen, g.lastSeen, g.lastId, g.message, g.apps]),
    ).toEqual([
      ['NotFound', 'order <num> not found', 3, 5, 30, 'b', 'order 22 not found', ['blog', 'shop']],
      ['Payment', 'card declined', 5, 1, 25, 'c', 'card declined', ['shop']],
      [null, 'order <num> not found', 1, 7, 7, 'd', 'order 3 not found', ['shop']],
    ]);
  });

  it('breaks ties on last seen by count, then by fingerprint; on one time, by the higher id', () => {
    const groups = groupErrors([
      row('a', 'X', 'one', 1, 1, 9, 'a1'),
      row('a', 'Y', 'two', 4, 1, 9, 'a2'),
      row('b', 'Y', 'two', 1, 1, 9, 'z9'),
    ]);
    expect(groups.map((g) => [g.kind, g.count, g.lastId])).toEqual([
      ['Y', 5, 'z9'],
      ['X', 1, 'a1'],
    ]);
  });
});

describe('grouping in slices', () => {
  const rows = Array.from({ length: 2500 }, (_, i) => ({
    app: `app-${i % 7}`,
    kind: `Kind${i % 3}`,
    message: `order ${i} not found`,
    count: 1,
    firstTs: i,
    lastTs: i,
    lastId: `id-${i}`,
  }));

  it('groups as groupErrors does', async () => {
    expect(await groupErrorsYielding(rows, 100)).toEqual(groupErrors(rows));
  });

  it('gives the event loop a turn between slices', async () => {
    let turns = 0;
    let done = false;
    const counting = new Promise<void>((resolve) => {
      const tick = (): void => {
        turns++;
        if (done) resolve();
        else setImmediate(tick);
      };
      setImmediate(tick);
    });
    await groupErrorsYielding(rows, 100);
    done = true;
    await counting;
    // 25 slices: the loop turned between them, so other work (an ingest request) ran meanwhile.
    expect(turns).toBeGreaterThanOrEqual(20);
  });

  it('groups pages as they come as groupErrors does the whole read, holding only the groups', async () => {
    const grouper = new ErrorGrouper(undefined, 100);
    for (let i = 0; i < rows.length; i += 333) await grouper.add(rows.slice(i, i + 333));
    expect(grouper.groups()).toEqual(groupErrors(rows));
  });
});
