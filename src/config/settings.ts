import { INTAKE_SETTINGS } from './intake-settings';
import { CORE_SETTINGS } from './core-settings';
import { OTLP_SETTINGS } from './otlp-settings';
import { QUEUE_SETTINGS } from './queue-settings';
import { SCHEDULER_SETTINGS } from './scheduler-settings';
import { SENTRY_SETTINGS } from './sentry-settings';
import type { Setting } from './setting';

/**
 * Every setting, grouped by capability (one file per group); `--help` lists
 * them in this order.
 */
export const SETTINGS = {
  ...CORE_SETTINGS,
  ...INTAKE_SETTINGS,
  ...OTLP_SETTINGS,
  ...SENTRY_SETTINGS,
  ...QUEUE_SETTINGS,
  ...SCHEDULER_SETTINGS,
} as const;

type Settings = typeof SETTINGS;
type ValueOf<S> = S extends Setting<infer T> ? T : never;
type Optional<K extends keyof Settings> = Settings[K] extends { default: string } ? never : K;

/** The validated, frozen configuration. Optional settings are `null` when unset. */
export type Config = {
  readonly [K in keyof Settings]: K extends Optional<K> ? ValueOf<Settings[K]> | null : ValueOf<Settings[K]>;
};
