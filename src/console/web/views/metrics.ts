import type uPlot from 'uplot';
import { getJson, type MetricNameRow, type MetricPoint, type MetricsAnswer } from '../api';
import { appPicker } from '../apps';
import { searchPicker } from '../search-picker';
import { PALETTE, timeChart } from '../chart';
import { h, replace, select } from '../dom';
import { isoTime, localTime, num } from '../format';
import { chosenRange, rangeSelect, TIME_RANGES } from '../time-range';
import { failureNotice, paramsOf, type View } from '../view';

const STATS = ['avg', 'count', 'sum', 'min', 'max'] as const;
type Stat = (typeof STATS)[number];
const RESOLUTIONS: ReadonlyArray<readonly [string, string]> = [
  ['raw', 'raw (each sample or summary)'],
  ['1m', '1 minute'],
  ['1h', '1 hour'],
];
/** Most points drawn: pages of the API are followed up to it. */
const MAX_POINTS = 20_000;
const PAGE = 10_000;

/** Points per app, on one x axis (the union of their times): what uPlot draws. */
function aligned(points: readonly MetricPoint[], stat: Stat): { apps: string[]; data: uPlot.AlignedData } {
  const apps = [...new Set(points.map((p) => p.app))].sort();
  const xs = [...new Set(points.map((p) => p.ts))].sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const series = apps.map(() => new Array<number | null>(xs.length).fill(null));
  for (const p of points) {
    const column = series[apps.indexOf(p.app)] as Array<number | null>;
    column[index.get(p.ts) as number] = p[stat];
  }
  return { apps, data: [xs.map((x) => x / 1000), ...series] };
}

export const metricsView: View = {
  id: 'metrics',
  title: 'Metrics',
  render(root, params, navigate) {
    const controller = new AbortController();
    const signal = controller.signal;
    const app = params.get('app') ?? undefined;
    const name = params.get('name') ?? undefined;
    const resolution = params.get('resolution') ?? 'raw';
    const stat = (STATS as readonly string[]).includes(params.get('stat') ?? '')
      ? (params.get('stat') as Stat)
      : 'avg';
    const range = chosenRange(params, TIME_RANGES);
    const form = h('form', { class: 'filters', attrs: { 'aria-label': 'Metric' } });
    const notice = h('div');
    const chartBox = h('div', { class: 'chart' });
    const status = h('p', { class: 'muted', attrs: { 'data-status': '' } });
    const points = h('div');
    root.append(h('h1', null, 'Metrics'), form, notice, status);
    let chart: uPlot | null = null;
    const go = (): void => navigate('metrics', paramsOf(form));

    void (async () => {
      try {
        // The names depend on the app: a new app starts without a metric.
        const pickApp = (): void => {
          const n = form.querySelector<HTMLInputElement>('input[name="name"]');
          if (n !== null) n.value = '';
          go();
        };
        form.append(
          await appPicker(app, 'all apps', pickApp),
          await searchPicker<MetricNameRow>({
            name: 'name',
            label: 'Metric',
            placeholder: 'choose a metric (type to search)',
            selected: name,
            path: '/v1/metrics/names',
            query: { app },
            rows: (answer) => answer.names as MetricNameRow[],
            value: (n) => n.name,
            describe: (n) => n.kinds.join(', ') || 'no raw rows',
            onPick: go,
          }),
          select('resolution', RESOLUTIONS, resolution, 'Resolution'),
          select(
            'stat',
            STATS.map((s) => [s, s] as const),
            stat,
            'Statistic',
          ),
          rangeSelect(TIME_RANGES, range),
        );
        for (const s of form.querySelectorAll('select')) s.addEventListener('change', go);
      } catch (err) {
        replace(notice, failureNotice(err));
      }
    })();

    if (name === undefined) {
      status.textContent = names0(app);
      return () => controller.abort();
    }

    void (async () => {
      const to = Date.now();
      const got: MetricPoint[] = [];
      let cursor: string | null = null;
      try {
        status.textContent = 'Loading…';
        do {
          const page: MetricsAnswer = await getJson<MetricsAnswer>(
            '/v1/metrics',
            { name, app, resolution, from: to - range[2], to, limit: PAGE, cursor: cursor ?? undefined },
            signal,
          );
          got.push(...page.points);
          cursor = page.next_cursor;
        } while (cursor !== null && got.length < MAX_POINTS);
      } catch (err) {
        status.textContent = '';
        replace(notice, failureNotice(err));
        return;
      }
      const cut =
        cursor !== null
          ? ` (the first ${num(got.length, 0)}: narrow the range or use a coarser resolution for the rest)`
          : '';
      status.textContent =
        got.length === 0
          ? resolution === 'raw'
            ? 'No points in this range.'
            : 'No points in this range. 1m and 1h points come from the downsample job, about a minute after the samples.'
          : `${num(got.length, 0)} points, ${stat} of each${cut}.`;
      root.dataset.points = String(got.length);
      if (got.length === 0) return;
      const { apps, data } = aligned(got, stat);
      root.append(chartBox, points);
      chart = timeChart(
        chartBox,
        root,
        apps.map((a, i) => ({ label: `${a} ${stat}`, stroke: PALETTE[i % PALETTE.length] as string })),
        data,
        { range: { fromMs: to - range[2], toMs: to } },
      );
      replace(
        points,
        h(
          'details',
          null,
          h('summary', null, `Points (${num(got.length, 0)})`),
          h(
            'table',
            { class: 'points' },
            h(
              'thead',
              null,
              h('tr', null, ...['time', 'app', 'kind', 'count', stat].map((c) => h('th', null, c))),
            ),
            h(
              'tbody',
              null,
              ...got.map((p) =>
                h(
                  'tr',
                  { attrs: { 'data-ts': p.ts, 'data-app': p.app, 'data-value': p[stat] } },
                  h('td', { attrs: { title: isoTime(p.ts) } }, localTime(p.ts)),
                  h('td', null, p.app),
                  h('td', null, p.kind ?? resolution),
                  h('td', null, num(p.count, 0)),
                  h('td', null, num(p[stat], 6)),
                ),
              ),
            ),
          ),
        ),
      );
    })();
    return () => {
      controller.abort();
      chart?.destroy();
    };
  },
};

function names0(app: string | undefined): string {
  return app === undefined
    ? 'Choose a metric: its names are listed for the app (or all apps) of the last 24 hours.'
    : `Choose one of ${app}’s metrics.`;
}
