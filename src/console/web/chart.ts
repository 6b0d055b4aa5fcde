import uPlot from 'uplot';
import { timeTickLabels } from './format';

/** A series drawn on a chart: its label and stroke colour. */
export interface SeriesStyle {
  readonly label: string;
  readonly stroke: string;
}

/** The time range a chart's x axis shows, whatever the span of its data (epoch milliseconds). */
export interface TimeRange {
  readonly fromMs: number;
  readonly toMs: number;
}

/**
 * A time chart (uPlot) of `series` over `xs` (epoch seconds), as wide as `sizedBy` (an element on
 * screen). With `range`, the x axis shows that range (two points of the last hour sit in the last
 * hour, not across the whole width); without it, the span of the data (a live chart). Tick labels
 * fit the step between ticks (`timeTickLabels`). The drawn axis is on `container` for reading:
 * `data-x-from`, `data-x-to` (epoch ms) and `data-x-ticks` (the labels, `|`-separated). The
 * returned chart is redrawn with `setData`; `destroy` removes it.
 */
export function timeChart(
  container: HTMLElement,
  sizedBy: HTMLElement,
  series: readonly SeriesStyle[],
  data: uPlot.AlignedData,
  options: { readonly height?: number; readonly range?: TimeRange } = {},
): uPlot {
  const width = Math.max(320, sizedBy.clientWidth - 24);
  const { range } = options;
  let ticks: string[] = [];
  return new uPlot(
    {
      width,
      height: options.height ?? 260,
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.stroke, width: 1.5, spanGaps: false }))],
      axes: [
        {
          // Wide enough for `12-06 14:30` without labels running into each other.
          space: 80,
          values: (u, splits, _axis, _space, incr) => {
            const min = u.scales.x?.min ?? 0;
            const max = u.scales.x?.max ?? 0;
            ticks = timeTickLabels(
              splits.map((s) => s * 1000),
              incr * 1000,
              (max - min) * 1000,
            );
            return ticks;
          },
        },
        { size: 60 },
      ],
      scales: {
        x:
          range === undefined
            ? { time: true }
            : { time: true, range: () => [range.fromMs / 1000, range.toMs / 1000] },
      },
      legend: { live: true },
      hooks: {
        draw: [
          (u) => {
            container.dataset.xFrom = String(Math.round((u.scales.x?.min ?? 0) * 1000));
            container.dataset.xTo = String(Math.round((u.scales.x?.max ?? 0) * 1000));
            container.dataset.xTicks = ticks.join('|');
          },
        ],
      },
    },
    data,
    container,
  );
}

/** Colours of the chart series, in order. */
export const PALETTE = [
  '#2563eb',
  '#dc2626',
  '#16a34a',
  '#d97706',
  '#7c3aed',
  '#0891b2',
  '#be185d',
  '#4d7c0f',
];
