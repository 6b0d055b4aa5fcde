import { ApiError } from './api';
import { h } from './dom';

/** Goes to a view with its parameters (they live in the URL's hash: a view can be linked). */
export type Navigate = (view: string, params?: Readonly<Record<string, string | undefined>>) => void;

/** One view of the console; `render` draws into `root` and returns what stops its timers and requests. */
export interface View {
  readonly id: string;
  readonly title: string;
  render(root: HTMLElement, params: URLSearchParams, navigate: Navigate): () => void;
}

/** A failed call as a line for people; 401 is left to the key form. */
export function failureNotice(err: unknown): HTMLElement | null {
  if (err instanceof DOMException && err.name === 'AbortError') return null;
  if (err instanceof ApiError) {
    if (err.status === 401) return null;
    const retry = err.retryAfter === null ? '' : ` Retry after ${err.retryAfter} s.`;
    return h(
      'p',
      { class: 'notice bad', attrs: { role: 'alert' } },
      `${err.status} ${err.code}: ${err.message}${retry}`,
    );
  }
  return h('p', { class: 'notice bad', attrs: { role: 'alert' } }, `Request failed: ${String(err)}`);
}

/** The view's parameters as an object, empty ones left out. */
export function paramsOf(form: HTMLFormElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new FormData(form)) if (typeof v === 'string' && v.trim() !== '') out[k] = v.trim();
  return out;
}
