/**
 * The SQL a Grafana PostgreSQL panel sends, expanded the way Grafana expands it, so a test can run
 * a dashboard's queries against a real database:
 *
 * 1. template variables, as Grafana's SQL data sources format them (a multi-value or "All"
 *    variable becomes a list of quoted literals; "All" with a custom all value is that value,
 *    unquoted);
 * 2. `$__interval_ms`, `$__interval`, `$__unixEpochFrom()`, `$__unixEpochTo()` (the SQL engine's
 *    first pass);
 * 3. the PostgreSQL macros (`$__timeGroup(col, 1m)` …), with the same regular expression, so an
 *    argument holding a `)` breaks here as it does in Grafana. An unknown macro is an error, as
 *    in Grafana.
 */

/** A dashboard variable's current selection. */
export interface VariableSelection {
  /** The selected values, or `all` for Grafana's "All". */
  readonly selected: readonly string[] | 'all';
  /** Every value the variable offers (what "All" means without a custom all value). */
  readonly options: readonly string[];
  readonly multi: boolean;
  readonly includeAll: boolean;
  /** The variable's custom all value (inserted as is), if any. */
  readonly allValue?: string;
}

export interface GrafanaQueryContext {
  readonly from: Date;
  readonly to: Date;
  /** The panel's interval (`$__interval`), milliseconds. */
  readonly intervalMs: number;
  readonly variables: Readonly<Record<string, VariableSelection>>;
}

function quoteLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

function formatVariable(v: VariableSelection): string {
  if (v.selected === 'all') {
    if (v.allValue) return v.allValue;
    return v.options.map(quoteLiteral).join(',');
  }
  if (v.multi || v.includeAll) return v.selected.map(quoteLiteral).join(',');
  return (v.selected[0] ?? '').replace(/'/g, "''");
}

/** Grafana's `gtime.FormatInterval`. */
export function formatInterval(ms: number): string {
  const units: Array<[number, string]> = [
    [365 * 86_400_000, 'y'],
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1000, 's'],
    [1, 'ms'],
  ];
  for (const [size, unit] of units) if (ms >= size) return `${Math.floor(ms / size)}${unit}`;
  return '1ms';
}

const INTERVAL_UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

/** Grafana's `gtime.ParseInterval` for fixed-length units (months and years are not used here). */
export function parseInterval(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d|w)$/.exec(text);
  if (!m) throw new Error(`error parsing interval ${text}`);
  return Number(m[1]) * (INTERVAL_UNIT_MS[m[2] ?? ''] ?? NaN);
}

/** A float64 as Go's `%v` prints it: shortest digits, exponent form from 1e6 and below 1e-4. */
export function goFloat(x: number): string {
  const abs = Math.abs(x);
  if (abs !== 0 && (abs >= 1e6 || abs < 1e-4)) {
    const [mantissa, exponent = '0'] = x.toExponential().split('e');
    const sign = exponent.startsWith('-') ? '-' : '+';
    return `${mantissa}e${sign}${exponent.replace(/^[-+]/, '').padStart(2, '0')}`;
  }
  return String(x);
}

function epochSeconds(d: Date): number {
  return Math.floor(d.getTime() / 1000);
}

function rfc3339(d: Date): string {
  return `'${d.toISOString().replace('.000Z', 'Z')}'`;
}

function evaluateMacro(name: string, args: string[], c: GrafanaQueryContext): string {
  const column = (): string => {
    if (!args[0]) throw new Error(`missing time column argument for macro ${name}`);
    return args[0];
  };
  const intervalSeconds = (): number => {
    if (args.length < 2)
      throw new Error(`macro ${name} needs time column and interval and optional fill value`);
    return parseInterval((args[1] ?? '').replace(/^'+|'+$/g, '')) / 1000;
  };
  switch (name) {
    case '__time':
      return `${column()} AS "time"`;
    case '__timeEpoch':
      return `extract(epoch from ${column()}) as "time"`;
    case '__timeFilter':
      return `${column()} BETWEEN ${rfc3339(c.from)} AND ${rfc3339(c.to)}`;
    case '__timeFrom':
      return rfc3339(c.from);
    case '__timeTo':
      return rfc3339(c.to);
    case '__timeGroup': {
      const s = goFloat(intervalSeconds());
      return `floor(extract(epoch from ${column()})/${s})*${s}`;
    }
    case '__timeGroupAlias':
      return `${evaluateMacro('__timeGroup', args, c)} AS "time"`;
    case '__unixEpochFilter':
      return `${column()} >= ${epochSeconds(c.from)} AND ${column()} <= ${epochSeconds(c.to)}`;
    case '__unixEpochNanoFilter':
      return `${column()} >= ${c.from.getTime()}000000 AND ${column()} <= ${c.to.getTime()}000000`;
    case '__unixEpochNanoFrom':
      return `${c.from.getTime()}000000`;
    case '__unixEpochNanoTo':
      return `${c.to.getTime()}000000`;
    case '__unixEpochGroup': {
      const s = goFloat(intervalSeconds());
      return `floor((${column()})/${s})*${s}`;
    }
    case '__unixEpochGroupAlias':
      return `${evaluateMacro('__unixEpochGroup', args, c)} AS "time"`;
    default:
      throw new Error(`unknown macro "${name}"`);
  }
}

/** `sql` as Grafana's PostgreSQL data source sends it to the database for context `c`. */
export function expandGrafanaSql(sql: string, c: GrafanaQueryContext): string {
  let out = sql.replace(
    /\$\{(\w+)\}|\$(\w+)/g,
    (whole, braced: string | undefined, bare: string | undefined) => {
      const v = c.variables[braced ?? bare ?? ''];
      return v ? formatVariable(v) : whole;
    },
  );
  out = out
    .replaceAll('$__interval_ms', String(c.intervalMs))
    .replaceAll('$__interval', formatInterval(c.intervalMs))
    .replaceAll('$__unixEpochFrom()', String(epochSeconds(c.from)))
    .replaceAll('$__unixEpochTo()', String(epochSeconds(c.to)));
  const macro = /\$([_a-zA-Z0-9]+)\(([^)]*)\)/g;
  return out.replace(macro, (whole: string, name: string, rawArgs: string, offset: number) => {
    // Grafana before 5.3 compatibility: `$__timeGroup(...)` directly followed by a comma is the alias form.
    const effective =
      name === '__timeGroup' && out[offset + whole.length] === ',' ? '__timeGroupAlias' : name;
    return evaluateMacro(
      effective,
      rawArgs.split(',').map((a) => a.trim()),
      c,
    );
  });
}
