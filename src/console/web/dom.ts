/*
 * A few DOM helpers. Text goes in as text nodes, never as HTML: nothing an event carries can
 * become markup. Styles are set through the CSSOM (`el.style.width`), which the page's
 * Content-Security-Policy allows, never through a `style` attribute, which it refuses.
 */

export type Child = Node | string | number | null | undefined | false;

export interface Props {
  readonly class?: string;
  /** Attributes set as given (`data-*`, `aria-*`, `type`, `name`, …). */
  readonly attrs?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly on?: { readonly [K in keyof HTMLElementEventMap]?: (e: HTMLElementEventMap[K]) => void };
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props?.class !== undefined) el.className = props.class;
  for (const [name, value] of Object.entries(props?.attrs ?? {})) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const [event, handler] of Object.entries(props?.on ?? {})) {
    el.addEventListener(event, handler as EventListener);
  }
  append(el, ...children);
  return el;
}

export function append(el: Node, ...children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Replaces an element's children. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}

/** A horizontal bar filled to `fraction` (0..1), with its text beside it. */
export function bar(fraction: number, text: string, level: 'ok' | 'warn' | 'bad' = 'ok'): HTMLElement {
  const fill = h('span', { class: `bar-fill ${level}` });
  fill.style.width = `${Math.max(0, Math.min(1, fraction)) * 100}%`;
  return h(
    'span',
    { class: 'bar-row' },
    h('span', { class: 'bar' }, fill),
    h('span', { class: 'bar-text' }, text),
  );
}

/** The level of a fill: warn from 70 %, bad from 90 %. */
export function fillLevel(fraction: number): 'ok' | 'warn' | 'bad' {
  return fraction >= 0.9 ? 'bad' : fraction >= 0.7 ? 'warn' : 'ok';
}

/** A select with `options` ([value, label]); `selected` is chosen when present. */
export function select(
  name: string,
  options: ReadonlyArray<readonly [string, string]>,
  selected: string | undefined,
  label: string,
): HTMLLabelElement {
  const s = h('select', { attrs: { name } });
  for (const [value, text] of options) {
    const o = h('option', { attrs: { value } }, text);
    if (value === selected) o.selected = true;
    s.appendChild(o);
  }
  return h('label', null, h('span', null, label), s);
}

/** A text input. */
export function input(
  name: string,
  value: string | undefined,
  label: string,
  type = 'text',
  placeholder = '',
): HTMLLabelElement {
  const i = h('input', { attrs: { name, type, placeholder } });
  i.value = value ?? '';
  return h('label', null, h('span', null, label), i);
}
