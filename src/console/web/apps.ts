import type { AppRow } from './api';
import { ago, num } from './format';
import { searchPicker } from './search-picker';

/**
 * The app picker: a search over GET /v1/apps (the apps of the last 24 hours), each with its
 * activity. An empty field means `emptyMeans` (all apps, or none chosen yet).
 */
export function appPicker(
  selected: string | undefined,
  emptyMeans: string,
  onPick?: (app: string) => void,
): Promise<HTMLLabelElement> {
  return searchPicker<AppRow>({
    name: 'app',
    label: 'App',
    placeholder: `${emptyMeans} (type to search)`,
    selected,
    path: '/v1/apps',
    rows: (answer) => answer.apps as AppRow[],
    value: (a) => a.app,
    describe: (a) => {
      const events = `${num(a.events, 0)}${a.events_capped ? '+' : ''} events`;
      const samples = a.metric_samples > 0 ? `, ${num(a.metric_samples, 0)} samples` : '';
      return `${events}${samples}, ${ago(a.last_seen)}`;
    },
    ...(onPick === undefined ? {} : { onPick }),
  });
}
