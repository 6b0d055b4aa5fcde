import { ApiError, getJson } from '../api';
import { h, replace } from '../dom';
import { failureNotice, type View } from '../view';

/** The endpoint the loss map draws: what became of every event an app generated, by stage and reason. */
export const OUTCOMES_PATH = '/v1/outcomes';

/**
 * Draws an answer of `GET /v1/outcomes`. The endpoint is not served yet; when it is, this is where
 * its flow (generated → stored, each loss by stage and reason) is drawn. Until its shape is
 * settled, the answer is shown as it came.
 */
function renderOutcomes(answer: unknown): HTMLElement {
  return h('pre', { class: 'outcomes' }, JSON.stringify(answer, null, 2));
}

export const lossMapView: View = {
  id: 'loss',
  title: 'Loss map',
  render(root, params) {
    const controller = new AbortController();
    const body = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
    root.append(h('h1', null, 'Loss map'), body);
    void (async () => {
      try {
        const answer = await getJson<unknown>(
          OUTCOMES_PATH,
          { app: params.get('app') ?? undefined },
          controller.signal,
        );
        replace(body, renderOutcomes(answer));
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) {
          replace(
            body,
            h(
              'div',
              { class: 'placeholder', attrs: { 'data-placeholder': 'outcomes' } },
              h(
                'p',
                null,
                `The loss map draws ${OUTCOMES_PATH}: for an app and a window, every event it generated, from the SDK to storage, with each loss at its stage and for its reason — the counts add up.`,
              ),
              h(
                'p',
                null,
                `This collector does not serve ${OUTCOMES_PATH} yet (it answered 404). The view fills in when it does; nothing else is needed.`,
              ),
            ),
          );
          return;
        }
        replace(body, failureNotice(err));
      }
    })();
    return () => controller.abort();
  },
};
