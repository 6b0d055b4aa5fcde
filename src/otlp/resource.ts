import { createHash } from 'node:crypto';
import { storableText } from '../events/cut-text';
import { plainValue } from './any-value';
import type { EventSource } from './mapped-export';
import type { OtlpKeyValue, OtlpResource, OtlpScope } from './model';
import { list, record, text } from './scalars';

/** The `source` of the events of one OTLP resource, and the keys that enter their ids. */
export interface MappedResource {
  readonly source: EventSource;
  /** Digest of every resource attribute: two processes differing only in, say, `host.name` give different ids. */
  readonly key: string;
}

/** `service.name` of a resource without one (what OTel SDKs default to). */
export const UNKNOWN_SERVICE = 'unknown_service';

/**
 * Resource → `source`: `service.name` → `app` (absent: the API key's app when auth is on, else
 * `unknown_service`), `service.version` → `version`, `deployment.environment.name` (or the older
 * `deployment.environment`) → `env`. Values longer than `maxLength` are cut. Other resource
 * attributes describe the process and are not stored (they would repeat on every event and use
 * up its attribute budget), but they enter the event ids. Values are made storable text
 * (events/cut-text.ts, `storableText`).
 */
export function mapResource(resource: unknown, keyApp: string | null, maxLength: number): MappedResource {
  const attributes = list<OtlpKeyValue>(record<OtlpResource>(resource)?.attributes);
  let app = '';
  let version = '';
  let env = '';
  let legacyEnv = '';
  const canonical: string[] = [];
  for (const kv of attributes) {
    const key = record<OtlpKeyValue>(kv)?.key;
    if (typeof key !== 'string') continue;
    const value = plainValue(kv.value);
    const asText = typeof value === 'string' ? value : '';
    if (key === 'service.name') app ||= asText;
    else if (key === 'service.version') version ||= asText;
    else if (key === 'deployment.environment.name') env ||= asText;
    else if (key === 'deployment.environment') legacyEnv ||= asText;
    canonical.push(`${key}=${JSON.stringify(value)}`);
  }
  canonical.sort();
  const environment = env || legacyEnv;
  const source: EventSource = {
    app: storableText(app || keyApp || UNKNOWN_SERVICE, maxLength),
    version: version ? storableText(version, maxLength) : null,
    env: environment ? storableText(environment, maxLength) : null,
  };
  return { source, key: createHash('sha256').update(canonical.join('\n')).digest('base64') };
}

/** The instrumentation scope's name and the key it adds to event ids. */
export function mapScope(scope: unknown): { readonly name: string; readonly key: string } {
  const s = record<OtlpScope>(scope);
  const name = text(s?.name);
  return { name, key: `${name}\u0000${text(s?.version)}` };
}
