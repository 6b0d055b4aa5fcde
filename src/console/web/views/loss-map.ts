import type { LossMap, LossStage } from '../../../loss-map/loss-map';
import { getJson } from '../api';
import { appPicker } from '../apps';
import { bar, h, replace } from '../dom';
import { num } from '../format';
import { chosenRange, rangeSelect, TIME_RANGES } from '../time-range';
import { failureNotice, paramsOf, type View } from '../view';

/** The endpoint the loss map draws: what became of every event an app generated, by stage and reason. */
export const OUTCOMES_PATH = '/v1/outcomes';

type OutcomesAnswer = LossMap & { readonly app: string; readonly from: number; readonly to: number };

/** The loss map's ranges: up to a day (its counts are per minute). */
const RANGES = TIME_RANGES.slice(0, 4);

const STAGES: ReadonlyArray<readonly [LossStage, string]> = [
  ['sdk', 'in the SDK'],
  ['collector', 'at the collector'],
  ['storage', 'in storage'],
  ['queue', 'in the queue'],
  ['shutdown', 'at a forced shutdown'],
  ['unrecorded', 'unrecorded, last pending'],
];

/** One step of the flow: a bar the width of its share of `generated`. */
function step(kind: string, label: string, n: number, of: number, level: 'ok' | 'warn' | 'bad'): HTMLElement {
  const share = of > 0 ? n / of : 0;
  return h(
    'tr',
    { attrs: { 'data-flow': kind, 'data-count': n } },
    h('th', null, label),
    h('td', null, bar(share, `${num(n, 0)} (${num(share * 100, 1)} %)`, level)),
  );
}

/**
 * The pending rows. Each stage counts as it sees: an SDK reports what it sent with its next
 * request, so events stored since its last report are stored before they are reported sent, and
 * the pipeline's share comes out below zero (the SDKs' as many above). A reader can act on neither:
 * then one row says how many are in flight, and a note says why the split is not shown.
 */
function pendingRows(a: OutcomesAnswer): { rows: HTMLElement[]; note: HTMLElement | null } {
  const { sdk, pipeline } = a.pending;
  if (sdk >= 0 && pipeline >= 0) {
    return {
      rows: [
        step('pending:sdk', '→ pending in SDKs', sdk, a.generated, 'warn'),
        step('pending:pipeline', '→ pending in the pipeline', pipeline, a.generated, 'warn'),
      ],
      note: null,
    };
  }
  const why =
    pipeline < 0
      ? `${events(-pipeline)} stored before their SDK reported them sent`
      : `the SDKs reported ${events(-sdk)} more sent or dropped than captured so far`;
  return {
    rows: [
      step(
        'pending:in-flight',
        '→ pending (counts in flight)',
        Math.max(0, sdk + pipeline),
        a.generated,
        'warn',
      ),
    ],
    note: h(
      'p',
      { class: 'muted', attrs: { 'data-in-flight': '' } },
      `Counts in flight: ${why}. An SDK reports with its next request (or when it closes), so the split between SDKs and the pipeline settles within a flush interval.`,
    ),
  };
}

function events(n: number): string {
  return n === 1 ? '1 event' : `${num(n, 0)} events`;
}

/**
 * The flow of one app's events over the window: generated, then stored, then each loss at its stage
 * for its reason, then what is pending, and the identity that ties them.
 */
function renderFlow(a: OutcomesAnswer): HTMLElement {
  const rows: HTMLElement[] = [step('generated', 'generated', a.generated, a.generated, 'ok')];
  rows.push(step('stored', '→ stored', a.stored, a.generated, 'ok'));
  for (const [stage, where] of STAGES) {
    // `?? {}`: a collector of an older version has no `unrecorded` stage.
    for (const [reason, n] of Object.entries(a.losses[stage] ?? {}).sort((x, y) => y[1] - x[1])) {
      rows.push(step(`lost:${stage}:${reason}`, `→ lost ${where}: ${reason}`, n, a.generated, 'bad'));
    }
  }
  const pendingShown = pendingRows(a);
  rows.push(...pendingShown.rows);
  const pending = a.pending.sdk + a.pending.pipeline;
  const holds = a.generated === a.stored + a.lost + pending;
  const throttled = Object.entries(a.throttled);
  return h(
    'div',
    null,
    h('table', { class: 'flow' }, h('tbody', null, ...rows)),
    h(
      'p',
      { attrs: { 'data-identity': holds ? 'holds' : 'broken' } },
      pending >= 0
        ? `generated = stored + lost + pending: ${num(a.generated, 0)} = ${num(a.stored, 0)} + ${num(a.lost, 0)} + ${num(pending, 0)}`
        : `generated + reported later = stored + lost: ${num(a.generated, 0)} + ${num(-pending, 0)} = ${num(a.stored, 0)} + ${num(a.lost, 0)}`,
    ),
    pendingShown.note,
    throttled.length === 0
      ? null
      : h(
          'p',
          { class: 'muted' },
          `Throttled meanwhile (sent again or lost as counted above): ${throttled.map(([r, n]) => `${r} ${num(n, 0)}`).join(', ')}.`,
        ),
    Object.keys(a.dropped_samples ?? {}).length > 0
      ? h(
          'p',
          { class: 'muted' },
          `Samples of aggregated metrics lost in the SDK before their summary (counted in samples; a summary is one event): ${Object.entries(
            a.dropped_samples ?? {},
          )
            .map(([r, n]) => `${r} ${num(n, 0)}`)
            .join(', ')}.`,
        )
      : null,
    (a.generated_unrecorded ?? 0) > 0
      ? h(
          'p',
          { class: 'muted' },
          `Of generated, ${num(a.generated_unrecorded, 0)} were counted only downstream (stored or lost): their earlier counts were never written (a collector killed).`,
        )
      : null,
    a.shed_requests > 0
      ? h(
          'p',
          { class: 'muted' },
          `Requests refused unread meanwhile (429 overloaded, sent again): ${num(a.shed_requests, 0)}.`,
        )
      : null,
    pending > 0
      ? h(
          'p',
          { class: 'muted' },
          'Pending events are on their way (SDK buffers as last reported, lanes, the stream). Past SLUICE_OUTCOMES_PENDING_HORIZON after their minute, what is still pending is counted as lost, unrecorded.',
        )
      : null,
  );
}

export const lossMapView: View = {
  id: 'loss',
  title: 'Loss map',
  render(root, params, navigate) {
    const controller = new AbortController();
    const app = params.get('app') ?? undefined;
    const range = chosenRange(params, RANGES);
    const form = h('form', { class: 'filters', attrs: { 'aria-label': 'Loss map' } });
    const body = h('div', null, h('p', { class: 'muted' }, app ? 'Loading…' : 'Choose an app.'));
    root.append(h('h1', null, 'Loss map'), form, body);
    const go = (): void => navigate('loss', paramsOf(form));
    void (async () => {
      try {
        form.append(await appPicker(app, 'choose an app', go), rangeSelect(RANGES, range));
        for (const s of form.querySelectorAll('select')) s.addEventListener('change', go);
        if (app === undefined || app === '') return;
        const to = Date.now();
        const answer = await getJson<OutcomesAnswer>(
          OUTCOMES_PATH,
          { app, from: String(to - range[2]), to: String(to) },
          controller.signal,
        );
        replace(body, renderFlow(answer));
      } catch (err) {
        replace(body, failureNotice(err));
      }
    })();
    return () => controller.abort();
  },
};
