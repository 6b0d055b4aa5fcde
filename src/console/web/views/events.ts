import { getJson, type ErrorGroupsAnswer, type EventsAnswer, type Query, type WireEvent } from '../api';
import { appPicker } from '../apps';
import { h, input, replace, select } from '../dom';
import { ago, fromLocalInput, isoTime, localTime, num, toLocalInput } from '../format';
import { failureNotice, paramsOf, type View } from '../view';

const PAGE = 50;
/** Error groups shown: the most recent; the caption says how many there are. */
const SHOWN_GROUPS = 20;
/** Pages cut short by the API's scan bound are continued at most this often per click. */
const MAX_FOLLOW_UPS = 5;
const TYPES: ReadonlyArray<readonly [string, string]> = [
  ['', 'any type'],
  ['error', 'error'],
  ['log', 'log'],
  ['lifecycle', 'lifecycle'],
  ['metric', 'metric'],
];

/** The read API's parameters from the view's (the URL hash keeps times as milliseconds). */
function apiQuery(p: URLSearchParams): Record<string, string | undefined> {
  const q: Record<string, string | undefined> = {};
  for (const k of ['app', 'type', 'name', 'env', 'version', 'text', 'from', 'to'])
    q[k] = p.get(k) ?? undefined;
  const attr = p.get('attr');
  if (attr !== null) {
    const eq = attr.indexOf('=');
    if (eq > 0) q[`attr.${attr.slice(0, eq)}`] = attr.slice(eq + 1);
  }
  return q;
}

function summaryOf(e: WireEvent): string {
  if (e.error !== undefined) return `${e.error.kind ?? 'Error'}: ${e.error.message}`;
  if (e.summary !== undefined) return `count ${e.summary.count}, avg ${num(e.summary.avg, 3)}`;
  if (e.value !== undefined) return `value ${num(e.value, 6)}`;
  return e.message ?? '';
}

function detailOf(e: WireEvent): HTMLElement {
  const rows: Array<[string, string]> = [
    ['id', e.id],
    ['time', `${localTime(e.ts)} (${isoTime(e.ts)})`],
    ['type', e.type],
    ['name', e.name],
    ['app', e.source.app],
    ['version', e.source.version ?? '–'],
    ['env', e.source.env ?? '–'],
  ];
  if (e.error !== undefined)
    rows.push(['error kind', e.error.kind ?? '–'], ['error message', e.error.message]);
  if (e.message !== undefined) rows.push(['message', e.message]);
  if (e.value !== undefined) rows.push(['value', String(e.value)]);
  if (e.summary !== undefined) rows.push(['summary', JSON.stringify(e.summary)]);
  const attributes = Object.entries(e.attributes);
  return h(
    'article',
    { class: 'detail', attrs: { 'data-event': e.id } },
    h('h2', null, `${e.type} · ${e.name}`),
    h('dl', null, ...rows.flatMap(([k, v]) => [h('dt', null, k), h('dd', null, v)])),
    h('h3', null, `Attributes (${attributes.length})`),
    attributes.length === 0
      ? h('p', { class: 'muted' }, 'none')
      : h(
          'dl',
          null,
          ...attributes.flatMap(([k, v]) => [h('dt', null, k), h('dd', null, JSON.stringify(v))]),
        ),
    e.error?.stack === undefined ? null : h('h3', null, 'Stack'),
    e.error?.stack === undefined ? null : h('pre', { class: 'stack' }, e.error.stack),
    h('details', null, h('summary', null, 'As JSON'), h('pre', null, JSON.stringify(e, null, 2))),
  );
}

export const eventsView: View = {
  id: 'events',
  title: 'Events',
  render(root, params, navigate) {
    const controller = new AbortController();
    const signal = controller.signal;
    const q = apiQuery(params);
    const form = h('form', { class: 'filters', attrs: { 'aria-label': 'Filters' } });
    const notice = h('div');
    const groups = h('section', { class: 'groups', attrs: { 'aria-label': 'Errors grouped' } });
    const tbody = h('tbody');
    const status = h('p', { class: 'muted', attrs: { 'data-status': '' } });
    const more = h('button', { attrs: { type: 'button', hidden: true } }, 'Older events');
    const detail = h(
      'div',
      { class: 'detail-pane' },
      h('p', { class: 'muted' }, 'Choose an event to see it in full.'),
    );
    root.append(
      h('h1', null, 'Events'),
      form,
      notice,
      groups,
      h(
        'div',
        { class: 'split' },
        h(
          'div',
          null,
          h(
            'table',
            { class: 'events' },
            h(
              'thead',
              null,
              h('tr', null, ...['time', 'type', 'app', 'name', 'summary'].map((c) => h('th', null, c))),
            ),
            tbody,
          ),
          status,
          more,
        ),
        detail,
      ),
    );

    const show = (e: WireEvent, row: HTMLElement | null): void => {
      for (const r of tbody.querySelectorAll('tr[aria-selected]')) r.removeAttribute('aria-selected');
      row?.setAttribute('aria-selected', 'true');
      replace(detail, detailOf(e));
    };

    void (async () => {
      const from = params.get('from');
      const to = params.get('to');
      form.append(
        await appPicker(params.get('app') ?? undefined, 'all apps').catch(() =>
          input('app', params.get('app') ?? undefined, 'App'),
        ),
        select('type', TYPES, params.get('type') ?? '', 'Type'),
        input('name', params.get('name') ?? undefined, 'Name'),
        input('env', params.get('env') ?? undefined, 'Env'),
        input('version', params.get('version') ?? undefined, 'Version'),
        input('attr', params.get('attr') ?? undefined, 'Attribute', 'text', 'route=/checkout'),
        input('text', params.get('text') ?? undefined, 'Text', 'search', 'in messages'),
        input('from', from === null ? undefined : toLocalInput(Number(from)), 'From', 'datetime-local'),
        input('to', to === null ? undefined : toLocalInput(Number(to)), 'To', 'datetime-local'),
        h('button', { attrs: { type: 'submit' } }, 'Apply'),
      );
    })();
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const p = paramsOf(form);
      navigate('events', {
        ...p,
        from: p.from === undefined ? undefined : String(fromLocalInput(p.from) ?? ''),
        to: p.to === undefined ? undefined : String(fromLocalInput(p.to) ?? ''),
      });
    });

    let cursor: string | null = null;
    let shown = 0;
    const load = async (): Promise<void> => {
      more.hidden = true;
      status.textContent = 'Loading…';
      let added = 0;
      let requests = 0;
      try {
        do {
          const page: EventsAnswer = await getJson<EventsAnswer>(
            '/v1/events',
            { ...q, limit: PAGE, cursor: cursor ?? undefined } as Query,
            signal,
          );
          requests++;
          for (const e of page.events) {
            const row = h(
              'tr',
              { attrs: { tabindex: 0, 'data-id': e.id } },
              h('td', { attrs: { title: isoTime(e.ts) } }, localTime(e.ts)),
              h('td', null, h('span', { class: `type ${e.type}` }, e.type)),
              h('td', null, e.source.app),
              h('td', null, e.name),
              h('td', { class: 'summary' }, summaryOf(e)),
            );
            row.addEventListener('click', () => show(e, row));
            row.addEventListener('keydown', (k) => k.key === 'Enter' && show(e, row));
            tbody.appendChild(row);
          }
          added += page.events.length;
          shown += page.events.length;
          cursor = page.next_cursor;
          // A short page with a cursor stopped at the scan bound: more may match further back.
        } while (cursor !== null && added < PAGE && requests < MAX_FOLLOW_UPS);
        status.textContent =
          shown === 0 && cursor === null
            ? 'No events match.'
            : `${num(shown, 0)} events${cursor === null ? ', all shown' : ''}.`;
        more.hidden = cursor === null;
      } catch (err) {
        status.textContent = '';
        replace(notice, failureNotice(err));
        more.hidden = cursor === null;
      }
    };
    more.addEventListener('click', () => void load());
    void load();

    if (q.type === undefined || q.type === 'error') {
      void (async () => {
        try {
          const g = await getJson<ErrorGroupsAnswer>(
            '/v1/error-groups',
            { app: q.app, env: q.env, version: q.version, from: q.from, to: q.to, limit: SHOWN_GROUPS },
            signal,
          );
          const counted =
            g.total_groups > g.groups.length
              ? `the ${g.groups.length} most recent of ${num(g.total_groups, 0)}`
              : `${g.groups.length}`;
          const caption = g.complete
            ? `Errors grouped (${counted})`
            : `Errors grouped (${counted}; the newest errors only, since ${localTime(g.scanned_from)})`;
          replace(
            groups,
            h('h2', null, caption),
            g.groups.length === 0
              ? h('p', { class: 'muted' }, 'No errors in the window.')
              : h(
                  'table',
                  null,
                  h(
                    'thead',
                    null,
                    h(
                      'tr',
                      null,
                      ...['count', 'kind', 'message', 'last seen', 'apps'].map((c) => h('th', null, c)),
                    ),
                  ),
                  h(
                    'tbody',
                    null,
                    ...g.groups.map((grp) => {
                      const row = h(
                        'tr',
                        { attrs: { tabindex: 0, 'data-fingerprint': grp.fingerprint } },
                        h('td', null, num(grp.count, 0)),
                        h('td', null, grp.kind ?? '–'),
                        h('td', { attrs: { title: grp.message } }, grp.template),
                        h('td', { attrs: { title: localTime(grp.last_seen) } }, ago(grp.last_seen)),
                        h(
                          'td',
                          null,
                          grp.app_count > grp.apps.length
                            ? `${grp.apps.join(', ')} and ${grp.app_count - grp.apps.length} more`
                            : grp.apps.join(', '),
                        ),
                      );
                      const open = async (): Promise<void> => {
                        const page = await getJson<EventsAnswer>(
                          '/v1/events',
                          { type: 'error', from: grp.last_seen, to: grp.last_seen + 1, limit: 1000 },
                          signal,
                        );
                        const e = page.events.find((x) => x.id === grp.last_id);
                        if (e !== undefined) show(e, null);
                      };
                      row.addEventListener(
                        'click',
                        () => void open().catch((err) => replace(notice, failureNotice(err))),
                      );
                      return row;
                    }),
                  ),
                ),
          );
        } catch (err) {
          replace(groups, failureNotice(err));
        }
      })();
    }
    return () => controller.abort();
  },
};
