/**
 * The PromQL of the Grafana dashboards (deploy/grafana/dashboards/*.json) and of the Prometheus
 * rules (deploy/prometheus/), as a test runs it against a real Prometheus: each panel target's
 * expression with Grafana's interval variables replaced, and what a query answered, checked
 * against what the panel shows.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { locateRepoFiles } from '../../../src/dev-cluster/repo-files';
import type { LoadedRule, PromSample, RunningPrometheus } from './prometheus';

interface Target {
  readonly refId: string;
  readonly expr?: string;
  readonly datasource?: { readonly type?: string };
}
interface Panel {
  readonly title: string;
  readonly datasource?: { readonly type?: string };
  readonly targets?: readonly Target[];
}

/** One Prometheus target of a dashboard panel. */
export interface PanelQuery {
  /** `<panel title>/<refId>`: unique across the dashboards (checked by `dashboardQueries`). */
  readonly key: string;
  readonly dashboard: string;
  readonly expr: string;
}

const root = locateRepoFiles().root;
const DASHBOARDS = path.join(root, 'deploy/grafana/dashboards');

/** The rule files Prometheus loads (deploy/prometheus/prometheus.yml's `rule_files`). */
export const RULE_FILES = [path.join(root, 'deploy/prometheus/sluice-rules.yml')];

/** Every Prometheus target of every dashboard, in panel order. */
export function dashboardQueries(): PanelQuery[] {
  const out: PanelQuery[] = [];
  for (const file of readdirSync(DASHBOARDS)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const dashboard = JSON.parse(readFileSync(path.join(DASHBOARDS, file), 'utf8')) as { panels: Panel[] };
    for (const panel of dashboard.panels) {
      for (const t of panel.targets ?? []) {
        const type = t.datasource?.type ?? panel.datasource?.type;
        if (type !== 'prometheus') continue;
        if (!t.expr) throw new Error(`${file}: panel "${panel.title}" ${t.refId} has no expr`);
        const key = `${panel.title}/${t.refId}`;
        if (out.some((q) => q.key === key)) throw new Error(`two Prometheus targets named ${key}`);
        out.push({ key, dashboard: file, expr: t.expr });
      }
    }
  }
  return out;
}

/**
 * `expr` as Grafana sends it, with `$__rate_interval` (and `$__interval`, `$__range`) set to
 * `window`: a test evaluates at one instant, over a window that holds its traffic.
 */
export function grafanaPromql(expr: string, window: string): string {
  return expr.replace(/\$__rate_interval|\$__interval|\$__range/g, window);
}

/** The metric names an expression reads that its targets expose (`sluice_…`, `haproxy_…`, `process_…`). */
export function metricNamesIn(expr: string): string[] {
  const names = expr.match(/\b(?:sluice_|haproxy_|process_)[a-z0-9_]+\b/g) ?? [];
  // A histogram's series are named after it; Prometheus's metadata lists the histogram itself.
  return [...new Set(names.map((n) => n.replace(/_(bucket|sum|count)$/, '')))];
}

/** What a query must answer in a setup: series with these labels, each value passing `value`. */
export interface Expected {
  /** The label names of every series, exactly (sorted when compared). */
  readonly labels: readonly string[];
  /** Whether each series' value is sensible. */
  readonly value: (v: number, labels: Readonly<Record<string, string>>) => boolean;
  /** Values one label must take across the series (all of them, at least). */
  readonly covers?: { readonly label: string; readonly values: readonly string[] };
  /** Exact number of series. */
  readonly count?: number;
}

/** `none`: the query answers no series in this setup (its panel is for another tier). */
export type Expectation = Expected | 'none';

export const positive = (v: number) => Number.isFinite(v) && v > 0;
export const nonNegative = (v: number) => Number.isFinite(v) && v >= 0;
export const oneOf =
  (...values: number[]) =>
  (v: number) =>
    values.includes(v);
/** Within [lo, hi] (a latency quantile in seconds, a ratio). */
export const between = (lo: number, hi: number) => (v: number) => Number.isFinite(v) && v >= lo && v <= hi;

/** Why `samples` does not meet `e`, or null. */
export function mismatch(samples: readonly PromSample[], e: Expectation): string | null {
  if (e === 'none') return samples.length === 0 ? null : `expected no series, got ${show(samples)}`;
  if (samples.length === 0) return 'no series';
  if (e.count !== undefined && samples.length !== e.count)
    return `expected ${e.count} series, got ${show(samples)}`;
  const wanted = [...e.labels].sort().join(',');
  for (const s of samples) {
    const got = Object.keys(s.metric).sort().join(',');
    if (got !== wanted) return `labels {${got}}, expected {${wanted}}: ${show(samples)}`;
    if (!e.value(s.value, s.metric)) return `value out of range: ${show(samples)}`;
  }
  if (e.covers) {
    const seen = new Set(samples.map((s) => s.metric[e.covers?.label ?? '']));
    const missing = e.covers.values.filter((v) => !seen.has(v));
    if (missing.length > 0) return `no series with ${e.covers.label}=${missing.join('|')}: ${show(samples)}`;
  }
  return null;
}

function show(samples: readonly PromSample[]): string {
  return JSON.stringify(samples.map((s) => ({ ...s.metric, value: s.value })));
}

/**
 * Checks every query against `expected` (keyed by `dashboardQueries` keys and record names) until
 * all pass or `timeoutMs` passes (a scrape or a rule evaluation may be due), and returns the
 * mismatches of the last round, one line each. A query without an expectation is a mismatch: a
 * new panel says what it must show.
 */
export async function checkQueries(
  prometheus: Pick<RunningPrometheus, 'query'>,
  queries: ReadonlyArray<{ readonly key: string; readonly expr: string }>,
  expected: Readonly<Record<string, Expectation>>,
  timeoutMs: number,
): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const problems: string[] = [];
    for (const key of Object.keys(expected))
      if (!queries.some((q) => q.key === key)) problems.push(`${key}: expected, but no such query`);
    for (const q of queries) {
      const e = expected[q.key];
      const why = e === undefined ? 'no expectation' : mismatch(await prometheus.query(q.expr), e);
      if (why !== null) problems.push(`${q.key}: ${why}  [${q.expr}]`);
    }
    if (problems.length === 0 || Date.now() > deadline) return problems;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Grafana's window for `$__rate_interval` and the like in these tests. */
const WINDOW = '1m';

/** Every dashboard panel's query (Grafana's variables filled in) and every recorded measure of `rules`. */
export function panelAndRuleQueries(rules: readonly LoadedRule[]): Array<{ key: string; expr: string }> {
  return [
    ...dashboardQueries().map((q) => ({ key: q.key, expr: grafanaPromql(q.expr, WINDOW) })),
    ...rules.filter((r) => r.type === 'recording').map((r) => ({ key: r.name, expr: r.name })),
  ];
}

/** Label sets of Sluice series with a label Prometheus renamed (`exported_…`: a clash with a target label). */
export async function renamedLabelSeries(
  prometheus: Pick<RunningPrometheus, 'query'>,
): Promise<Array<Readonly<Record<string, string>>>> {
  const series = await prometheus.query('{__name__=~"sluice_.+"}');
  return series
    .filter((s) => Object.keys(s.metric).some((k) => k.startsWith('exported_')))
    .map((s) => s.metric);
}

/** An alerting rule's health and the metric names its query reads that `exported` lacks. */
export function alertReads(
  a: LoadedRule,
  exported: ReadonlySet<string>,
): { alert: string; health: string; error: string; unknown: string[] } {
  return {
    alert: a.name,
    health: a.health,
    error: a.lastError ?? '',
    unknown: metricNamesIn(a.query).filter((n) => !exported.has(n)),
  };
}
