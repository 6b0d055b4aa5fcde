import { accepting, type Parser } from './parsers';
import { setting } from './setting';

/** A Sentry project id: the digits of a DSN's path. */
const PROJECT_ID = /^[0-9]{1,20}$/;
/** Longest app name a mapping may give (the `source.app` limit's default). */
const MAX_APP_LENGTH = 128;

/** `1=checkout,2=web`: project ids to app names. */
function projectApps(): Parser<ReadonlyMap<string, string>> {
  return accepting('id=app, comma-separated', (raw) => {
    const map = new Map<string, string>();
    for (const entry of raw.split(',')) {
      const pair = entry.trim();
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      const id = eq < 0 ? '' : pair.slice(0, eq).trim();
      const app = eq < 0 ? '' : pair.slice(eq + 1).trim();
      if (!PROJECT_ID.test(id) || app === '' || app.length > MAX_APP_LENGTH) {
        throw new Error(
          `must be project-id=app pairs such as 1=checkout,2=web (digits = 1 to ${MAX_APP_LENGTH} characters); got ${JSON.stringify(pair.slice(0, 64))}`,
        );
      }
      if (map.has(id)) throw new Error(`names project ${id} twice`);
      map.set(id, app);
    }
    return map;
  });
}

/** Settings of the Sentry endpoints (docs/sentry.md). */
export const SENTRY_SETTINGS = {
  sentryProjects: setting({
    env: 'SLUICE_SENTRY_PROJECTS',
    doc: 'With auth off: the app of each Sentry project id (the number at the end of a DSN), as `1=checkout,2=web`. A project not listed is the app `sentry-<id>`. With auth on the DSN key names the app and this is not used.',
    parse: projectApps(),
  }),
} as const;
