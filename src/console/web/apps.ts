import { getJson, type AppsAnswer } from './api';
import { h } from './dom';
import { ago, num } from './format';

/** The app picker: the apps of the last 24 hours (GET /v1/apps), with their activity. */
export async function appSelect(
  selected: string | undefined,
  allLabel: string | null,
): Promise<HTMLLabelElement> {
  const answer = await getJson<AppsAnswer>('/v1/apps');
  const s = h('select', { attrs: { name: 'app' } });
  if (allLabel !== null) s.appendChild(h('option', { attrs: { value: '' } }, allLabel));
  const names = answer.apps.map((a) => a.app);
  // An app given in the URL stays selectable even when it was not seen in the last 24 hours.
  if (selected !== undefined && selected !== '' && !names.includes(selected)) {
    s.appendChild(h('option', { attrs: { value: selected } }, `${selected} (not seen in 24 h)`));
  }
  for (const a of answer.apps) {
    const events = `${num(a.events, 0)}${a.events_capped ? '+' : ''} events`;
    const samples = a.metric_samples > 0 ? `, ${num(a.metric_samples, 0)} samples` : '';
    s.appendChild(
      h('option', { attrs: { value: a.app } }, `${a.app} — ${events}${samples}, ${ago(a.last_seen)}`),
    );
  }
  if (selected !== undefined) s.value = selected;
  return h('label', null, h('span', null, 'App'), s);
}
