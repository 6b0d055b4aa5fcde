import { getJson, type Query } from './api';
import { h, replace } from './dom';

/** Options a picker shows at once: the first page of its list, or of a search. */
const SHOWN = 50;
/** Most pages one search reads to fill its options. */
const MAX_PAGES = 4;
/** Pause after a keystroke before the search runs (milliseconds). */
const TYPING_PAUSE_MS = 150;

let pickers = 0;

export interface SearchPickerOptions<Row> {
  /** The form field's name (`app`, `name`): what `paramsOf` reads. */
  readonly name: string;
  readonly label: string;
  /** Shown while the field is empty (what an empty field means). */
  readonly placeholder: string;
  readonly selected: string | undefined;
  /** A list of the read API that takes `prefix`, `limit` and answers `next_cursor`. */
  readonly path: string;
  /** Its other parameters (an app for metric names). */
  readonly query?: Query;
  /** The answer's rows, each option's value, and its text. */
  readonly rows: (answer: Record<string, unknown>) => readonly Row[];
  readonly value: (row: Row) => string;
  readonly describe: (row: Row) => string;
  /** Called when a value is picked (chosen from the list, or typed and committed). */
  readonly onPick?: (value: string) => void;
}

/**
 * A field that picks one name of a list by search: a page of the list is offered first, and each
 * pause in typing asks the API for the names that start with what was typed (`prefix`), so the
 * picker works with any number of names. A note says when the list shows only some of them.
 * Resolves once the first page is in (rejects as `getJson` does).
 */
export async function searchPicker<Row>(o: SearchPickerOptions<Row>): Promise<HTMLLabelElement> {
  const id = `picker-${++pickers}`;
  const field = h('input', {
    attrs: { name: o.name, type: 'search', list: id, placeholder: o.placeholder, autocomplete: 'off' },
  });
  field.value = o.selected ?? '';
  const options = h('datalist', { attrs: { id } });
  const note = h('small', { class: 'muted', attrs: { 'data-picker-note': o.name } });
  let asked = 0;
  const fill = async (prefix: string): Promise<void> => {
    const mine = ++asked;
    const rows: Row[] = [];
    let cursor: string | null = null;
    // A page may hold fewer names than asked (names without data in the window are skipped, and the
    // API reads a bounded number per page): a few more pages fill the list.
    for (let pages = 0; pages < MAX_PAGES && rows.length < SHOWN; pages++) {
      const answer: Record<string, unknown> = await getJson<Record<string, unknown>>(o.path, {
        ...o.query,
        prefix: prefix === '' ? undefined : prefix,
        limit: SHOWN - rows.length,
        cursor: cursor ?? undefined,
      });
      rows.push(...o.rows(answer));
      cursor = typeof answer.next_cursor === 'string' ? answer.next_cursor : null;
      if (cursor === null) break;
    }
    // A later search answered first: its options stay.
    if (mine !== asked) return;
    replace(options, ...rows.map((r) => h('option', { attrs: { value: o.value(r) } }, o.describe(r))));
    note.textContent =
      cursor === null
        ? rows.length === 0 && prefix !== ''
          ? `none starts with “${prefix}”`
          : ''
        : `${rows.length} shown, more exist: type to search`;
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  field.addEventListener('input', (e) => {
    clearTimeout(timer);
    timer = setTimeout(() => void fill(field.value.trim()).catch(() => undefined), TYPING_PAUSE_MS);
    // Chromium and Firefox say so when an option of the list was chosen.
    if ((e as InputEvent).inputType === 'insertReplacementText' || !(e instanceof InputEvent)) pick();
  });
  let picked = o.selected ?? '';
  const pick = (): void => {
    const value = field.value.trim();
    if (value === picked) return;
    picked = value;
    o.onPick?.(value);
  };
  field.addEventListener('change', pick);
  // Enter picks what was typed; in a form with a submit button it submits it instead.
  if (o.onPick !== undefined)
    field.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      e.preventDefault();
      pick();
    });
  await fill('');
  return h('label', { class: 'picker' }, h('span', null, o.label), field, options, note);
}
