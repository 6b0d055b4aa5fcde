import 'uplot/dist/uPlot.min.css';
import './style.css';
import { readKey, setReadKey, whenKeyNeeded } from './api';
import { h, replace } from './dom';
import { KEY_REQUEST_TEXT, keyRequestFor } from './key-refusal';
import { eventsView } from './views/events';
import { lossMapView } from './views/loss-map';
import { metricsView } from './views/metrics';
import { pipelineView } from './views/pipeline';
import type { Navigate, View } from './view';

/*
 * The console: four views over the read API and GET /pipeline, routed by the URL's hash
 * (`#/events?app=web-shop`), so a view with its filters can be linked and reloaded.
 */

const VIEWS: readonly View[] = [pipelineView, eventsView, metricsView, lossMapView];
const DEFAULT_VIEW = 'pipeline';

const nav = h('nav', { attrs: { 'aria-label': 'Views' } });
const keyStatus = h('span', { class: 'key-status' });
const main = h('main', { attrs: { id: 'view' } });
document.body.append(
  h('header', null, h('a', { class: 'brand', attrs: { href: '#/' } }, 'Sluice'), nav, keyStatus),
  main,
);

let dispose: () => void = () => undefined;

function route(): { view: View; params: URLSearchParams } {
  const hash = location.hash.replace(/^#\/?/, '');
  const [id = '', query = ''] = hash.split('?', 2);
  const view = VIEWS.find((v) => v.id === id) ?? (VIEWS.find((v) => v.id === DEFAULT_VIEW) as View);
  return { view, params: new URLSearchParams(query) };
}

const navigate: Navigate = (id, params = {}) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const target = `#/${id}${q.toString() !== '' ? `?${q}` : ''}`;
  if (location.hash === target) show();
  else location.hash = target;
};

function show(): void {
  dispose();
  const { view, params } = route();
  document.title = `${view.title} · Sluice console`;
  replace(
    nav,
    ...VIEWS.map((v) =>
      h('a', { attrs: { href: `#/${v.id}`, 'aria-current': v === view ? 'page' : undefined } }, v.title),
    ),
  );
  showKeyStatus();
  const root = h('section', { attrs: { 'data-view': view.id } });
  replace(main, root);
  dispose = view.render(root, params, navigate);
}

/** The header's word on the read key: in use (with a way to forget it), refused, or none given. */
function showKeyStatus(refused = false): void {
  if (refused) return replace(keyStatus, 'Read key refused');
  if (readKey() === null) return replace(keyStatus);
  replace(
    keyStatus,
    'Read key set · ',
    h(
      'button',
      { class: 'link', attrs: { type: 'button' }, on: { click: () => (setReadKey(null), show()) } },
      'Forget',
    ),
  );
}

/**
 * The API answered 401 to a call that carried `refused` (null: no key): every view stops, a refused
 * key is forgotten (the header stops saying a key is set), and the console asks for a read key.
 */
function askForKey(refused: string | null): void {
  dispose();
  dispose = () => undefined;
  const why = keyRequestFor(refused);
  if (refused !== null && readKey() === refused) setReadKey(null);
  showKeyStatus(why !== 'none');
  const field = h('input', { attrs: { name: 'key', type: 'password', autocomplete: 'off', required: true } });
  const form = h(
    'form',
    {
      class: 'key-form',
      on: {
        submit: (e) => {
          e.preventDefault();
          setReadKey(field.value.trim());
          show();
        },
      },
    },
    h('h1', null, 'A read key is needed'),
    h('p', { attrs: why === 'none' ? {} : { 'data-refused': why, role: 'alert' } }, KEY_REQUEST_TEXT[why]),
    h(
      'p',
      { class: 'muted' },
      'An operator makes one with sluice key read <id>. It is kept in this tab only and sent with every call.',
    ),
    h('label', null, h('span', null, 'Read key'), field),
    h('button', { attrs: { type: 'submit' } }, 'Use this key'),
  );
  replace(main, form);
  field.focus();
}

whenKeyNeeded((refused) => {
  if (main.querySelector('.key-form') === null) askForKey(refused);
});
window.addEventListener('hashchange', show);
show();
