import { isWithinMetricBound, summaryOutOfRange } from '../events/metric-bound';
import { summaryFault } from '../events/summary-rule';
import type { MetricSummary } from '../events/types';
import { AttributeBag } from './attributes';
import { deterministicId } from './event-id';
import { ExportBuilder, newEvent, type MappedExport, type MappingContext } from './mapped-export';
import {
  TEMPORALITY_CUMULATIVE,
  TEMPORALITY_DELTA,
  type OtlpExponentialHistogramDataPoint,
  type OtlpHistogramDataPoint,
  type OtlpMetric,
  type OtlpNumberDataPoint,
  type OtlpSummaryDataPoint,
} from './model';
import { sluiceName, withSuffix } from './names';
import { mapResource, mapScope } from './resource';
import {
  countOf,
  finiteDouble,
  has,
  int32,
  int64Number,
  int64Text,
  list,
  nanosToMs,
  record,
  text,
} from './scalars';
import { estimateMinMax } from './histogram-bounds';

/** Suffix of the name of a cumulative reading (see `mapMetrics`). */
export const CUMULATIVE_SUFFIX = '_cumulative';

/** A data point as the metric mapping sees it: its value, or its summary, or why it has none. */
type PointValue =
  | { readonly value: number }
  | { readonly summary: MetricSummary; readonly estimated: boolean }
  | { readonly skip: true }
  | { readonly invalid: string };

/**
 * `ExportMetricsServiceRequest` → metric events, one per data point, named by the metric's name
 * (rule in names.ts), with the point's attributes (and `otel.unit` when the metric has a unit):
 * - gauge points, and delta sum points → a sample (`value`);
 * - delta histogram, exponential histogram and summary points → a summary (`count, min, max,
 *   sum, avg`); when the point has no min/max, they are estimated from the bucket bounds (the
 *   event then carries `otel.estimated: "min_max"`); a point with count 0 is skipped;
 * - cumulative temporality (the JS SDK's default): the point holds a running total since
 *   `start_time`, which a stateless collector cannot turn into deltas (the previous total may
 *   have reached another collector, or been lost). So it is never stored as something to be
 *   summed: a monotonic cumulative sum, and a cumulative histogram, become readings named
 *   `<name>_cumulative` (a sample of the total, or the summary since start), with
 *   `otel.start_ts` (epoch ms) so a reader can tell restarts apart; the increase over a range is
 *   the last reading minus the first of one `otel.start_ts`. A non-monotonic cumulative sum (an
 *   up-down counter) is a level, like a gauge, and is stored as a sample under its own name.
 * ts: the point's time, else now.
 */
export function mapMetrics(request: unknown, ctx: MappingContext): MappedExport {
  const out = new ExportBuilder(ctx);
  const { limits } = ctx;
  for (const rm of list<unknown>(record<{ resourceMetrics?: unknown }>(request)?.resourceMetrics)) {
    const resourceMetrics = record<{ resource?: unknown; scopeMetrics?: unknown }>(rm);
    const resource = mapResource(resourceMetrics?.resource, ctx.keyApp, limits.maxSourceLength);
    for (const sm of list<unknown>(resourceMetrics?.scopeMetrics)) {
      const scopeMetrics = record<{ scope?: unknown; metrics?: unknown }>(sm);
      const scope = mapScope(scopeMetrics?.scope);
      for (const m of list<unknown>(scopeMetrics?.metrics)) {
        const metric = record<OtlpMetric>(m);
        if (metric === null) continue;
        const baseName = sluiceName(text(metric.name), limits.maxNameLength, 'otel.metric');
        const unit = text(metric.unit);
        for (const { point, value, cumulative } of pointsOf(metric)) {
          out.records++;
          if ('skip' in value) {
            out.skipped++;
            continue;
          }
          if ('invalid' in value) {
            out.unmappable(value.invalid);
            continue;
          }
          const name = cumulative ? withSuffix(baseName, CUMULATIVE_SUFFIX, limits.maxNameLength) : baseName;
          const bag = new AttributeBag({
            maxAttributes: limits.maxAttributes,
            maxKeyLength: limits.maxAttributeKeyLength,
            maxStringLength: limits.maxStringLength,
          });
          if (unit) bag.set('otel.unit', unit);
          const startMs = nanosToMs(point.startTimeUnixNano);
          if (cumulative && startMs > 0) bag.set('otel.start_ts', startMs);
          if ('estimated' in value && value.estimated) bag.set('otel.estimated', 'min_max');
          bag.addKeyValues(point.attributes);
          out.droppedAttributes += bag.dropped;
          const event = newEvent(resource.source, {
            type: 'metric',
            name,
            ts: nanosToMs(point.timeUnixNano) || ctx.now,
            ...('value' in value ? { value: value.value } : { summary: value.summary }),
            attributes: bag.toObject(),
          });
          event.id = deterministicId(
            'metric',
            resource.key,
            scope.key,
            int64Text(point.startTimeUnixNano),
            int64Text(point.timeUnixNano),
            JSON.stringify(event),
          );
          out.add(event);
        }
      }
    }
  }
  return out;
}

interface PointCommon {
  readonly attributes?: unknown;
  readonly startTimeUnixNano?: unknown;
  readonly timeUnixNano?: unknown;
}

function* pointsOf(
  metric: OtlpMetric,
): Generator<{ point: PointCommon; value: PointValue; cumulative: boolean }> {
  const gauge = record<{ dataPoints?: unknown }>(metric.gauge);
  const sum = record<NonNullable<OtlpMetric['sum']>>(metric.sum);
  const histogram = record<NonNullable<OtlpMetric['histogram']>>(metric.histogram);
  const exponential = record<NonNullable<OtlpMetric['exponentialHistogram']>>(metric.exponentialHistogram);
  const summary = record<{ dataPoints?: unknown }>(metric.summary);
  if (gauge && has(metric, 'gauge')) {
    for (const p of points<OtlpNumberDataPoint>(gauge.dataPoints))
      yield { point: p, value: numberValue(p), cumulative: false };
  } else if (sum && has(metric, 'sum')) {
    const temporality = int32(sum.aggregationTemporality);
    // A non-monotonic cumulative sum is a level: stored like a gauge.
    const cumulative = temporality === TEMPORALITY_CUMULATIVE && sum.isMonotonic === true;
    for (const p of points<OtlpNumberDataPoint>(sum.dataPoints)) {
      const value = isKnown(temporality) ? numberValue(p) : { invalid: 'temporality_unspecified' };
      yield { point: p, value, cumulative };
    }
  } else if (histogram && has(metric, 'histogram')) {
    const temporality = int32(histogram.aggregationTemporality);
    for (const p of points<OtlpHistogramDataPoint>(histogram.dataPoints)) {
      const value = isKnown(temporality) ? histogramValue(p) : { invalid: 'temporality_unspecified' };
      yield { point: p, value, cumulative: temporality === TEMPORALITY_CUMULATIVE };
    }
  } else if (exponential && has(metric, 'exponentialHistogram')) {
    const temporality = int32(exponential.aggregationTemporality);
    for (const p of points<OtlpExponentialHistogramDataPoint>(exponential.dataPoints)) {
      const value = isKnown(temporality) ? countedValue(p, null) : { invalid: 'temporality_unspecified' };
      yield { point: p, value, cumulative: temporality === TEMPORALITY_CUMULATIVE };
    }
  } else if (summary && has(metric, 'summary')) {
    for (const p of points<OtlpSummaryDataPoint>(summary.dataPoints)) {
      yield { point: p, value: summaryPointValue(p), cumulative: false };
    }
  }
}

function isKnown(temporality: number): boolean {
  return temporality === TEMPORALITY_DELTA || temporality === TEMPORALITY_CUMULATIVE;
}

function points<T extends object>(v: unknown): T[] {
  return list<unknown>(v).map((p) => record<T>(p) ?? ({} as T));
}

function numberValue(p: OtlpNumberDataPoint): PointValue {
  if (has(p, 'asDouble')) {
    const d = finiteDouble(p.asDouble);
    if (d === null) return { invalid: 'value_not_finite' };
    return isWithinMetricBound(d) ? { value: d } : { invalid: 'value_out_of_range' };
  }
  if (has(p, 'asInt')) {
    const n = int64Number(p.asInt);
    return Number.isFinite(n) ? { value: n } : { invalid: 'value_invalid' };
  }
  return { invalid: 'value_missing' };
}

function histogramValue(p: OtlpHistogramDataPoint): PointValue {
  const counts = list<unknown>(p.bucketCounts).map((c) => countOf(c) ?? 0);
  const bounds = list<unknown>(p.explicitBounds).map((b) => (typeof b === 'number' ? b : NaN));
  return countedValue(p, { counts, bounds });
}

/** count/sum/min/max of a histogram (explicit buckets when given, for the min/max fallback). */
function countedValue(
  p: OtlpHistogramDataPoint | OtlpExponentialHistogramDataPoint,
  buckets: { counts: number[]; bounds: number[] } | null,
): PointValue {
  const count = countOf(p.count);
  if (count === null) return { invalid: 'count_invalid' };
  if (count === 0) return { skip: true };
  const sum = has(p, 'sum') ? finiteDouble(p.sum) : null;
  const givenMin = has(p, 'min') ? finiteDouble(p.min) : null;
  const givenMax = has(p, 'max') ? finiteDouble(p.max) : null;
  let estimated = false;
  let min = givenMin;
  let max = givenMax;
  if (min === null || max === null) {
    const guess = estimateMinMax(buckets, sum === null ? null : sum / count);
    if (guess === null) return { invalid: 'min_max_unknown' };
    min ??= guess.min;
    max ??= guess.max;
    estimated = true;
  }
  // Without a sum (allowed when measurements may be negative), the midpoint of min and max stands in.
  const total = sum ?? ((min + max) / 2) * count;
  if (sum === null) estimated = true;
  if (min > max) return { invalid: 'min_above_max' };
  const avg = total / count;
  return summaryValue({ count, min, max, sum: total, avg }, estimated);
}

function summaryPointValue(p: OtlpSummaryDataPoint): PointValue {
  const count = countOf(p.count);
  if (count === null) return { invalid: 'count_invalid' };
  if (count === 0) return { skip: true };
  const sum = finiteDouble(p.sum) ?? 0;
  let min: number | null = null;
  let max: number | null = null;
  for (const q of list<unknown>(p.quantileValues)) {
    const qv = record<{ quantile?: unknown; value?: unknown }>(q);
    const value = finiteDouble(qv?.value);
    if (value === null) continue;
    if (qv?.quantile === 0) min = value;
    if (qv?.quantile === 1) max = value;
  }
  const avg = sum / count;
  const estimated = min === null || max === null;
  min ??= Math.min(avg, max ?? avg);
  max ??= Math.max(avg, min);
  return summaryValue({ count, min, max, sum, avg }, estimated);
}

/**
 * `summary` as a point's value, unless the summary rule refuses it (a sum beyond a double, min
 * above max) or it is past the metric bound (rollup sums would overflow).
 */
function summaryValue(summary: MetricSummary, estimated: boolean): PointValue {
  if (summaryFault(summary) !== null) return { invalid: 'summary_invalid' };
  return summaryOutOfRange(summary) === null ? { summary, estimated } : { invalid: 'value_out_of_range' };
}
