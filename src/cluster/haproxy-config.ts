/**
 * Reading haproxy.cfg and deriving the copy `sluice cluster` runs: only the bind addresses and
 * the server lines change (plus, for tests only, the check timing and keep-alive timeout, which
 * are rewritten in place so every other line stays as in the file).
 */
import type { CheckTiming } from './check-timing';

/** Section names in haproxy.cfg that the derivation relies on. */
export const INGEST_FRONTEND = 'ingest';
export const STATS_FRONTEND = 'stats';
export const COLLECTORS_BACKEND = 'collectors';

/** Thrown when haproxy.cfg lacks a line the derivation needs, or holds a value it cannot read. */
export class HaproxyConfigError extends Error {
  override readonly name = 'HaproxyConfigError';
}

const UNIT_MS: Readonly<Record<string, number>> = {
  us: 0.001,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** An HAProxy time value (`500ms`, `2s`, `1m`; a bare number is milliseconds) in milliseconds. */
export function parseHaproxyTime(value: string): number {
  const m = /^(\d+)(us|ms|s|m|h|d)?$/.exec(value);
  if (!m) throw new HaproxyConfigError(`"${value}" is not an HAProxy time (e.g. 500ms, 2s)`);
  return Number(m[1]) * (UNIT_MS[m[2] ?? 'ms'] ?? 1);
}

/** Milliseconds written the way haproxy.cfg writes them. */
export function formatHaproxyTime(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0)
    throw new HaproxyConfigError(`${ms} ms is not a whole number of milliseconds`);
  return ms % 1000 === 0 && ms > 0 ? `${ms / 1000}s` : `${ms}ms`;
}

interface Section {
  /** e.g. `backend collectors`. */
  readonly header: string;
  /** Index of the header line. */
  readonly start: number;
  /** Index after the last line. */
  readonly end: number;
}

function sectionsOf(lines: readonly string[]): Section[] {
  const sections: Section[] = [];
  lines.forEach((line, i) => {
    if (line === '' || /^\s/.test(line) || line.startsWith('#')) return;
    const last = sections.pop();
    if (last) sections.push({ ...last, end: i });
    sections.push({ header: line.trim().replace(/\s+/g, ' '), start: i, end: lines.length });
  });
  return sections;
}

function sectionOf(lines: readonly string[], header: string): Section {
  const s = sectionsOf(lines).find((x) => x.header === header);
  if (!s) throw new HaproxyConfigError(`haproxy.cfg has no "${header}" section`);
  return s;
}

/** Indexes of the lines in `section` whose first word is `keyword` (comments skipped). */
function linesWith(lines: readonly string[], section: Section, keyword: string): number[] {
  const found: number[] = [];
  for (let i = section.start + 1; i < section.end; i++) {
    const words = (lines[i] ?? '').trim().split(/\s+/);
    if (words[0] === keyword) found.push(i);
  }
  return found;
}

function onlyLine(lines: readonly string[], section: Section, keyword: string): number {
  const found = linesWith(lines, section, keyword);
  if (found.length !== 1) {
    throw new HaproxyConfigError(
      `"${section.header}" must have exactly one "${keyword}" line (found ${found.length})`,
    );
  }
  return found[0] as number;
}

/** Index of the `timeout <name>` line of the defaults section. */
function timeoutLine(lines: readonly string[], name: string): number {
  const defaults = sectionOf(lines, 'defaults');
  const found = linesWith(lines, defaults, 'timeout').filter(
    (i) => (lines[i] ?? '').trim().split(/\s+/)[1] === name,
  );
  if (found.length !== 1)
    throw new HaproxyConfigError(`defaults must have exactly one "timeout ${name}" line`);
  return found[0] as number;
}

function indentOf(line: string): string {
  return /^\s*/.exec(line)?.[0] ?? '    ';
}

/** The settings of haproxy.cfg that the collectors' settings must agree with. */
export interface HaproxySettings {
  readonly timing: CheckTiming;
  /** `timeout http-keep-alive` (milliseconds). */
  readonly httpKeepAliveMs: number;
  /** Server names of the collectors backend, in order. */
  readonly serverNames: readonly string[];
}

/** Reads the check timing, keep-alive timeout and server names of a haproxy.cfg text. */
export function readHaproxySettings(text: string): HaproxySettings {
  const lines = text.split('\n');
  const backend = sectionOf(lines, `backend ${COLLECTORS_BACKEND}`);
  const words = (lines[onlyLine(lines, backend, 'default-server')] ?? '').trim().split(/\s+/);
  const param = (name: string): string => {
    const i = words.indexOf(name);
    const value = i === -1 ? undefined : words[i + 1];
    if (value === undefined)
      throw new HaproxyConfigError(`default-server of "${backend.header}" must set "${name}"`);
    return value;
  };
  const count = (name: string): number => {
    const n = Number(param(name));
    if (!Number.isInteger(n) || n < 1) throw new HaproxyConfigError(`${name} must be a positive integer`);
    return n;
  };
  const timeoutValue = (name: string): number =>
    parseHaproxyTime((lines[timeoutLine(lines, name)] ?? '').trim().split(/\s+/)[2] ?? '');
  return {
    timing: {
      interMs: parseHaproxyTime(param('inter')),
      fastinterMs: parseHaproxyTime(param('fastinter')),
      downinterMs: parseHaproxyTime(param('downinter')),
      fall: count('fall'),
      rise: count('rise'),
      timeoutCheckMs: timeoutValue('check'),
    },
    httpKeepAliveMs: timeoutValue('http-keep-alive'),
    serverNames: linesWith(lines, backend, 'server').map(
      (i) => (lines[i] ?? '').trim().split(/\s+/)[1] ?? '',
    ),
  };
}

/** One collector as HAProxy sees it. */
export interface ServerAddress {
  /** Server name, e.g. `collector1` (shown in stats, logs and `X-Served-By`). */
  readonly name: string;
  /** `host:port`. */
  readonly address: string;
}

export interface DeriveOptions {
  /** Address of the ingest frontend, e.g. `127.0.0.1:8080`. */
  readonly ingestBind: string;
  /** Address of the stats frontend (stats page and Prometheus exporter). */
  readonly statsBind: string;
  readonly servers: readonly ServerAddress[];
  /** Tests only: check timing written instead of the file's (same formula, shorter values). */
  readonly timing?: CheckTiming;
  /** Tests only: `timeout http-keep-alive` instead of the file's (milliseconds). */
  readonly httpKeepAliveMs?: number;
}

const SAFE_NAME = /^[A-Za-z0-9_.-]+$/;
const SAFE_ADDRESS = /^[A-Za-z0-9_.:[\]-]+$/;

/** The haproxy.cfg text with its addresses replaced (see the module comment). */
export function deriveHaproxyConfig(template: string, o: DeriveOptions): string {
  if (o.servers.length === 0) throw new HaproxyConfigError('at least one server is needed');
  for (const s of o.servers) {
    if (!SAFE_NAME.test(s.name) || !SAFE_ADDRESS.test(s.address)) {
      throw new HaproxyConfigError(`bad server ${JSON.stringify(s)}`);
    }
  }
  for (const a of [o.ingestBind, o.statsBind]) {
    if (!SAFE_ADDRESS.test(a)) throw new HaproxyConfigError(`bad bind address "${a}"`);
  }
  const lines = template.split('\n');
  const replace = (i: number, text: string): void => {
    lines[i] = indentOf(lines[i] ?? '') + text;
  };

  replace(onlyLine(lines, sectionOf(lines, `frontend ${INGEST_FRONTEND}`), 'bind'), `bind ${o.ingestBind}`);
  replace(onlyLine(lines, sectionOf(lines, `frontend ${STATS_FRONTEND}`), 'bind'), `bind ${o.statsBind}`);

  if (o.timing) {
    const backend = sectionOf(lines, `backend ${COLLECTORS_BACKEND}`);
    const i = onlyLine(lines, backend, 'default-server');
    const words = (lines[i] ?? '').trim().split(/\s+/);
    const set = (name: string, value: string): void => {
      const at = words.indexOf(name);
      if (at === -1 || at + 1 >= words.length)
        throw new HaproxyConfigError(`default-server must set "${name}"`);
      words[at + 1] = value;
    };
    set('inter', formatHaproxyTime(o.timing.interMs));
    set('fastinter', formatHaproxyTime(o.timing.fastinterMs));
    set('downinter', formatHaproxyTime(o.timing.downinterMs));
    set('fall', String(o.timing.fall));
    set('rise', String(o.timing.rise));
    replace(i, words.join(' '));
    replace(timeoutLine(lines, 'check'), `timeout check ${formatHaproxyTime(o.timing.timeoutCheckMs)}`);
  }
  if (o.httpKeepAliveMs !== undefined) {
    replace(
      timeoutLine(lines, 'http-keep-alive'),
      `timeout http-keep-alive ${formatHaproxyTime(o.httpKeepAliveMs)}`,
    );
  }

  // Server lines last: removing them shifts the indexes the replacements above used.
  const backend = sectionOf(lines, `backend ${COLLECTORS_BACKEND}`);
  const serverLines = linesWith(lines, backend, 'server');
  const first = serverLines[0];
  if (first === undefined) throw new HaproxyConfigError(`"${backend.header}" has no server line to replace`);
  const indent = indentOf(lines[first] ?? '');
  for (const i of [...serverLines].reverse()) lines.splice(i, 1);
  lines.splice(first, 0, ...o.servers.map((s) => `${indent}server ${s.name} ${s.address}`));

  const overridden = o.timing !== undefined || o.httpKeepAliveMs !== undefined;
  const header = overridden
    ? '# Generated from haproxy.cfg by a test: addresses, check timing and keep-alive timeout differ.'
    : '# Generated by `sluice cluster` from haproxy.cfg: only the addresses differ. Do not edit.';
  return [header, ...lines].join('\n');
}
