import type uPlot from 'uplot';
import { getJson, type PipelineAnswer } from '../api';
import { timeChart } from '../chart';
import { bar, fillLevel, h, replace } from '../dom';
import { bytes, localTime, num } from '../format';
import { failureNotice, type View } from '../view';

/** The pipeline is sampled once a second by the collector; the view asks at the same pace. */
const REFRESH_MS = 1000;

const RATES: ReadonlyArray<readonly [string, string, string]> = [
  ['accepted', 'accepted /s', '#16a34a'],
  ['throttled', 'throttled /s', '#d97706'],
  ['rejected', 'rejected /s', '#dc2626'],
  ['shed_requests', 'shed requests /s', '#7c3aed'],
  ['stored', 'stored /s', '#2563eb'],
];

function card(label: string, value: string, name: string): HTMLElement {
  return h(
    'div',
    { class: 'card', attrs: { 'data-figure': name } },
    h('span', { class: 'label' }, label),
    h('strong', null, value),
  );
}

function healthBadge(name: string, state: string | boolean): HTMLElement {
  const text = typeof state === 'boolean' ? (state ? 'yes' : 'no') : state.replace('_', ' ');
  const good = state === true || state === 'up' || state === 'off';
  const level =
    name === 'draining'
      ? state === true
        ? 'bad'
        : 'ok'
      : good
        ? 'ok'
        : state === 'not_checked'
          ? 'idle'
          : 'bad';
  return h('span', { class: `badge ${level}`, attrs: { 'data-health': name } }, `${name}: ${text}`);
}

function table(head: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | Node>>): HTMLTableElement {
  return h(
    'table',
    null,
    h('thead', null, h('tr', null, ...head.map((c) => h('th', null, c)))),
    h('tbody', null, ...rows.map((r) => h('tr', null, ...r.map((c) => h('td', null, c))))),
  );
}

function draw(parts: Record<string, HTMLElement>, s: PipelineAnswer): void {
  replace(
    parts.health as HTMLElement,
    ...Object.entries(s.health).map(([k, v]) => healthBadge(k, v)),
    h(
      'span',
      { class: 'muted' },
      ` ${s.mode === 'ingest' ? 'tier 4 (queue)' : 'direct'} · ${s.storage} · sampled ${localTime(s.at)}`,
    ),
  );
  replace(parts.rates as HTMLElement, ...RATES.map(([k, label]) => card(label, num(s.rates?.[k]), k)));

  const lanes = s.lanes.map((l) => [
    l.name,
    bar(
      l.events / l.capacity,
      `${num(l.events, 0)} / ${num(l.capacity, 0)} events`,
      fillLevel(l.events / l.capacity),
    ),
    bar(
      l.bytes / l.capacity_bytes,
      `${bytes(l.bytes)} / ${bytes(l.capacity_bytes)}`,
      fillLevel(l.bytes / l.capacity_bytes),
    ),
  ]);
  const w = s.writer;
  const writer =
    w === null
      ? []
      : [
          h('h2', null, 'Writer'),
          h(
            'div',
            { class: 'cards' },
            card('batches /s', num(w.batches_per_s), 'batches_per_s'),
            card('events / batch', num(w.events_per_batch), 'events_per_batch'),
            card('commit mean', `${num(w.commit_ms_mean, 2)} ms`, 'commit_ms_mean'),
            card('commit p99 ≤', `${num(w.commit_ms_p99, 1)} ms`, 'commit_ms_p99'),
            card('in flight', `${w.in_flight} / ${w.max_in_flight}`, 'in_flight'),
            card('drain /s', num(w.drain_per_s), 'drain_per_s'),
          ),
        ];
  const q = s.queue;
  const queue =
    q === null
      ? []
      : [
          h('h2', null, 'Stream (tier 4)'),
          h(
            'div',
            { class: 'cards' },
            card('backlog', `${num(q.stream_messages, 0)} messages`, 'stream_messages'),
            card('workers drain', `${num(q.drain_messages_per_s)} messages/s`, 'drain_messages_per_s'),
            card('pending acks', num(q.pending_acks, 0), 'pending_acks'),
          ),
          bar(
            q.stream_bytes / Math.max(1, q.stream_max_bytes),
            `${bytes(q.stream_bytes)} of ${bytes(q.stream_max_bytes)}`,
            fillLevel(q.stream_bytes / Math.max(1, q.stream_max_bytes)),
          ),
        ];
  replace(
    parts.detail as HTMLElement,
    ...(lanes.length > 0 ? [h('h2', null, 'Lanes'), table(['lane', 'events', 'bytes'], lanes)] : []),
    ...writer,
    ...queue,
    h('h2', null, 'Busiest apps'),
    s.apps.length === 0
      ? h('p', { class: 'muted' }, 'No events in the last seconds.')
      : table(
          ['app', 'accepted /s', 'errors /s', 'throttled /s', 'rate limit'],
          s.apps.map((a) => [
            a.app,
            num(a.accepted_per_s),
            num(a.errors_per_s),
            num(a.throttled_per_s),
            a.limit_per_s === null || a.limit_use === null
              ? 'none'
              : bar(
                  a.limit_use,
                  `${Math.round(a.limit_use * 100)} % of ${num(a.limit_per_s, 0)}/s`,
                  fillLevel(a.limit_use),
                ),
          ]),
        ),
  );
}

function chartData(s: PipelineAnswer): uPlot.AlignedData {
  return [
    s.history.map((r) => (r.at ?? 0) / 1000),
    ...RATES.map(([k]) => s.history.map((r) => r[k] ?? null)),
  ];
}

export const pipelineView: View = {
  id: 'pipeline',
  title: 'Pipeline',
  render(root) {
    const parts = {
      health: h('div', { class: 'health' }),
      rates: h('div', { class: 'cards' }),
      chart: h('div', { class: 'chart' }),
      detail: h('div'),
      notice: h('div'),
    };
    root.append(
      h('h1', null, 'Pipeline, live'),
      parts.health,
      parts.notice,
      parts.rates,
      parts.chart,
      parts.detail,
    );
    let chart: uPlot | null = null;
    let timer: number | undefined;
    let stopped = false;
    const controller = new AbortController();
    const tick = async (): Promise<void> => {
      try {
        const s = await getJson<PipelineAnswer>('/pipeline', {}, controller.signal);
        if (stopped) return;
        replace(parts.notice);
        draw(parts, s);
        if (chart === null)
          chart = timeChart(
            parts.chart,
            root,
            RATES.map(([, label, stroke]) => ({ label, stroke })),
            chartData(s),
            { height: 200 },
          );
        else chart.setData(chartData(s));
        root.dataset.sampledAt = String(s.at);
      } catch (err) {
        if (!stopped) replace(parts.notice, failureNotice(err));
      }
      if (!stopped) timer = window.setTimeout(() => void tick(), REFRESH_MS);
    };
    void tick();
    return () => {
      stopped = true;
      controller.abort();
      window.clearTimeout(timer);
      chart?.destroy();
    };
  },
};
