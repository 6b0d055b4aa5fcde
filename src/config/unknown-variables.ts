import { SETTINGS } from './settings';

/**
 * `SLUICE_*` variables that are not settings. A typo such as `SLUICE_PORTT` must not start a
 * collector on its defaults, nor a retired name leave an operator believing it still works: both
 * stop the process (docs/configuration.md, "Unknown and retired variables").
 */

/** Names retired from the settings, and what replaced them (CHANGELOG.md). */
export const RETIRED_VARIABLES: Readonly<Record<string, string>> = {
  SLUICE_LATENESS_MS:
    'rollups see every late sample through the invalidation log, whatever its lateness; remove it',
  SLUICE_PG_POOL_SIZE:
    'the writer has SLUICE_WRITE_CONCURRENCY connections of its own and reads SLUICE_PG_READ_POOL_SIZE; set those instead',
  SLUICE_REDIS_RETRY_MS:
    'a stalled Redis costs a rate-limit decision at most SLUICE_REDIS_TIMEOUT_MS; set that instead',
};

/**
 * Variables of the `sluice` family that are read by something other than a collector's settings:
 * the HAProxy stats page of `sluice cluster` and docker-compose.yml, the Grafana reader of
 * docker-compose.yml, the read token of `sluice tail` and `sluice query`, and the marker a
 * relaunched process carries (src/runtime/relaunch.ts).
 */
const OTHER_SLUICE_VARIABLES: ReadonlySet<string> = new Set([
  'SLUICE_READ_TOKEN',
  'SLUICE_STATS_USER',
  'SLUICE_STATS_PASSWORD',
  'SLUICE_GRAFANA_DB_PASSWORD',
  'SLUICE_RELAUNCHED',
]);

/** A `SLUICE_*` variable that is neither a setting nor one of the others above, with why. */
export interface UnknownVariable {
  readonly variable: string;
  readonly reason: string;
}

/** The first unknown `SLUICE_*` variable of `env` (in name order), or null. */
export function findUnknownVariable(
  env: Readonly<Record<string, string | undefined>>,
): UnknownVariable | null {
  const settings = Object.values(SETTINGS).map((s) => s.env);
  const known = new Set(settings);
  for (const variable of Object.keys(env).sort()) {
    if (!variable.startsWith('SLUICE_') || known.has(variable) || OTHER_SLUICE_VARIABLES.has(variable))
      continue;
    const retired = RETIRED_VARIABLES[variable];
    if (retired !== undefined) return { variable, reason: `is retired: ${retired}` };
    const closest = closestName(variable, settings);
    return {
      variable,
      reason:
        `is not a setting; ` +
        (closest !== null ? `did you mean ${closest}? ` : '') +
        '(sluice --help lists them all)',
    };
  }
  return null;
}

/** The candidate within a few edits of `name` (a typo, a missing word), or null. */
export function closestName(name: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(name, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  const significant = name.replace(/^SLUICE_|^--/, '').length;
  return bestDistance <= Math.max(2, Math.floor(significant / 3)) ? best : null;
}

/** Levenshtein distance (insert, delete, substitute: 1 each). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitute = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitute));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
