/** Flags of the commands that are no collector (`tail`, `query`, `delete`): parsed here, not settings. */

/** A bad flag or value; the message says which, and the command prints its usage after it. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type FlagKind = 'value' | 'switch' | 'list';

/** `--flag value`, `--flag=value`, `--switch`; a `list` flag may repeat. */
export interface ParsedFlags {
  readonly values: ReadonlyMap<string, string>;
  readonly lists: ReadonlyMap<string, readonly string[]>;
  readonly switches: ReadonlySet<string>;
  /** Arguments that are not one of `spec`'s flags, in order (a value follows its flag). */
  readonly rest: readonly string[];
  /** Arguments not starting with `--`, in order, when `rest` is not asked for. */
  readonly positional: readonly string[];
}

/**
 * Reads the flags of `spec` (names without `--`). With `keepUnknown`, other `--flags` and their
 * values are left in `rest` (for a command that passes them on as settings); otherwise they are an
 * error.
 */
export function parseFlags(
  args: readonly string[],
  spec: Readonly<Record<string, FlagKind>>,
  keepUnknown = false,
): ParsedFlags {
  const values = new Map<string, string>();
  const lists = new Map<string, string[]>();
  const switches = new Set<string>();
  const rest: string[] = [];
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (!arg.startsWith('--')) {
      if (keepUnknown) rest.push(arg);
      else positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq >= 0 ? eq : undefined);
    const kind = spec[name];
    if (kind === undefined) {
      if (!keepUnknown) throw new UsageError(`unknown option --${name}`);
      rest.push(arg);
      continue;
    }
    if (kind === 'switch') {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      switches.add(name);
      continue;
    }
    const value = eq >= 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || (eq < 0 && value.startsWith('--'))) {
      throw new UsageError(`--${name} needs a value`);
    }
    if (kind === 'list') lists.set(name, [...(lists.get(name) ?? []), value]);
    else if (values.has(name)) throw new UsageError(`--${name} is given twice`);
    else values.set(name, value);
  }
  return { values, lists, switches, rest, positional };
}
