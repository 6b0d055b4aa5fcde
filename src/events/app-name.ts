import { isStorableText } from './cut-text';

/**
 * The app-name rule (`source.app`): a non-empty string of at most `maxLength` UTF-16 code units
 * (`EventLimits.maxSourceLength`: 128) that storage holds exactly as sent (no U+0000, no lone
 * surrogate). Stored events pass it, and so does every app the loss map, the metrics and the
 * activity tally count by: an app that fails it is never a key anywhere.
 */
export function isAppName(app: unknown, maxLength: number): app is string {
  return typeof app === 'string' && app.length > 0 && app.length <= maxLength && isStorableText(app);
}
