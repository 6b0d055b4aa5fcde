import uPlot from 'uplot';

/** A series drawn on a chart: its label and stroke colour. */
export interface SeriesStyle {
  readonly label: string;
  readonly stroke: string;
}

/**
 * A time chart (uPlot) of `series` over `xs` (epoch seconds), as wide as `sizedBy` (an element on
 * screen). The returned chart is redrawn with `setData`; `destroy` removes it.
 */
export function timeChart(
  container: HTMLElement,
  sizedBy: HTMLElement,
  series: readonly SeriesStyle[],
  data: uPlot.AlignedData,
  height = 260,
): uPlot {
  const width = Math.max(320, sizedBy.clientWidth - 24);
  return new uPlot(
    {
      width,
      height,
      series: [{}, ...series.map((s) => ({ label: s.label, stroke: s.stroke, width: 1.5, spanGaps: false }))],
      axes: [{}, { size: 60 }],
      scales: { x: { time: true } },
      legend: { live: true },
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
