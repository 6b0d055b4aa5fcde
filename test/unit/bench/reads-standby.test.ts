import { routeCounts, routesSince, standbyRowsWanted } from '../../bench/reads-standby';

const scrape = (standby: number, down: number): string =>
  [
    '# HELP sluice_read_standby_routes_total Requests of the read API …',
    '# TYPE sluice_read_standby_routes_total counter',
    `sluice_read_standby_routes_total{source="standby",reason="none"} ${standby}`,
    `sluice_read_standby_routes_total{source="primary",reason="standby_down"} ${down}`,
    'sluice_read_standby_up 1',
  ].join('\n');

describe('the reads suite on a standby', () => {
  it('reads where the read API requests went from the collector’s metrics', () => {
    expect(routeCounts(scrape(12, 0))).toEqual(
      new Map([
        ['standby/none', 12],
        ['primary/standby_down', 0],
      ]),
    );
    expect(routeCounts('sluice_read_standby_up 0\n')).toEqual(new Map());
  });

  it('counts the requests of a window: what grew, and only that', () => {
    const went = routesSince(routeCounts(scrape(12, 3)), routeCounts(scrape(40, 3)));
    expect(went).toEqual(new Map([['standby/none', 28]]));
  });

  it('runs by default; BENCH_READS_STANDBY=0 leaves it out', () => {
    expect(standbyRowsWanted({})).toBe(true);
    expect(standbyRowsWanted({ BENCH_READS_STANDBY: '1' })).toBe(true);
    expect(standbyRowsWanted({ BENCH_READS_STANDBY: '0' })).toBe(false);
  });
});
