import type { Parser } from './parsers';

export interface Setting<T> {
  /** Environment variable; the flag is its lower-kebab form without the prefix. */
  readonly env: string;
  /** Default as written in `--help`; parsed like any other value. Absent: the setting is optional. */
  readonly default?: string;
  readonly doc: string;
  readonly parse: Parser<T>;
}

export function setting<T>(s: Setting<T> & { default: string }): Setting<T> & { default: string };
export function setting<T>(s: Setting<T>): Setting<T>;
export function setting<T>(s: Setting<T>): Setting<T> {
  return s;
}
