import { parseArgs } from 'node:util';

/**
 * Command-line flags, read by Node's `util.parseArgs`: the flags of the commands that are no
 * collector (`tail`, `query`, `delete`), of `sluice cluster`, and the setting flags of `serve`.
 */

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
 * error. A value never starts with `--` unless given as `--flag=--value`; a single-dash argument
 * (`-5`, `-x`) is no flag.
 */
export function parseFlags(
  args: readonly string[],
  spec: Readonly<Record<string, FlagKind>>,
  keepUnknown = false,
): ParsedFlags {
  const options = Object.fromEntries(
    Object.entries(spec).map(([name, kind]) => [
      name,
      { type: kind === 'switch' ? ('boolean' as const) : ('string' as const), multiple: kind === 'list' },
    ]),
  );
  const { tokens } = parseArgs({
    args: [...args],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values = new Map<string, string>();
  const lists = new Map<string, string[]>();
  const switches = new Set<string>();
  const rest: string[] = [];
  const positional: string[] = [];
  const free = (arg: string): void => {
    if (keepUnknown) rest.push(arg);
    else positional.push(arg);
  };
  for (const token of tokens) {
    if (token.kind === 'positional') {
      free(token.value);
      continue;
    }
    if (token.kind === 'option-terminator' || !token.rawName.startsWith('--')) {
      free(args[token.index] ?? '');
      continue;
    }
    const { name } = token;
    const kind = spec[name];
    if (kind === undefined) {
      if (!keepUnknown) throw new UsageError(`unknown option --${name}`);
      rest.push(args[token.index] ?? '');
      continue;
    }
    if (kind === 'switch') {
      if (token.inlineValue === true) throw new UsageError(`--${name} takes no value`);
      switches.add(name);
      continue;
    }
    const value = token.value;
    if (value === undefined || (token.inlineValue !== true && value.startsWith('--'))) {
      throw new UsageError(`--${name} needs a value`);
    }
    if (kind === 'list') lists.set(name, [...(lists.get(name) ?? []), value]);
    else if (values.has(name)) throw new UsageError(`--${name} is given twice`);
    else values.set(name, value);
  }
  return { values, lists, switches, rest, positional };
}
