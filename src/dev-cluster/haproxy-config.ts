/**
 * Reading haproxy.cfg and rendering the copy `sluice cluster` runs: only the bind addresses change,
 * and each `server-template` (filled from Docker's DNS under docker-compose) becomes one `server`
 * line per local collector, with the template's ports mapped to that collector's loopback ports.
 * For tests only, the check timing and keep-alive timeout are rewritten in place as well, so every
 * other line stays as in the file.
 */
import type { CheckTiming } from './check-timing';

/** Section names in haproxy.cfg that the derivation and the runner rely on. */
export const INGEST_FRONTEND = 'ingest';
export const OTLP_FRONTEND = 'otlp';
export const STATS_FRONTEND = 'stats';
export const EXPORTER_FRONTEND = 'exporter';
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

/** One `server-template <prefix> <count> <host>:<port> [params]` line. */
export interface ServerTemplate {
  /** Backend it belongs to, e.g. `collectors`. */
  readonly backend: string;
  /** Name prefix: servers are `<prefix>1` … `<prefix><count>`. */
  readonly prefix: string;
  /** Most servers it makes, i.e. the largest number of replicas it can follow. */
  readonly count: number;
  /** DNS name filled in by the resolver, e.g. the compose service `collector`. */
  readonly host: string;
  /** Port traffic goes to. */
  readonly port: number;
  /** The rest of the line (check port, init-addr…). */
  readonly params: readonly string[];
}

/** The settings of haproxy.cfg that the collectors' settings must agree with. */
export interface HaproxySettings {
  readonly timing: CheckTiming;
  /** `timeout http-keep-alive` (milliseconds). */
  readonly httpKeepAliveMs: number;
  /** Every `server-template` line, in file order. */
  readonly serverTemplates: readonly ServerTemplate[];
  /** Names of the frontends, in file order. */
  readonly frontends: readonly string[];
}

/** The `default-server` line of the defaults section, split into words. */
function defaultServerWords(lines: readonly string[]): { index: number; words: string[] } {
  const index = onlyLine(lines, sectionOf(lines, 'defaults'), 'default-server');
  return { index, words: (lines[index] ?? '').trim().split(/\s+/) };
}

function serverTemplatesOf(lines: readonly string[]): Array<ServerTemplate & { line: number }> {
  const out: Array<ServerTemplate & { line: number }> = [];
  for (const section of sectionsOf(lines)) {
    const [kind, backend] = section.header.split(' ');
    if (kind !== 'backend' || backend === undefined) continue;
    for (const i of linesWith(lines, section, 'server-template')) {
      const [, prefix, count, target, ...params] = (lines[i] ?? '').trim().split(/\s+/);
      const m = /^([A-Za-z0-9_.-]+):(\d+)$/.exec(target ?? '');
      const n = Number(count);
      if (!prefix || !m || !Number.isInteger(n) || n < 1) {
        throw new HaproxyConfigError(
          `"${section.header}": cannot read "${(lines[i] ?? '').trim()}" (server-template <prefix> <count> <host>:<port> ...)`,
        );
      }
      out.push({ backend, prefix, count: n, host: m[1] ?? '', port: Number(m[2]), params, line: i });
    }
  }
  return out;
}

/** Reads the check timing, keep-alive timeout, server templates and frontends of a haproxy.cfg text. */
export function readHaproxySettings(text: string): HaproxySettings {
  const lines = text.split('\n');
  const { words } = defaultServerWords(lines);
  const param = (name: string): string => {
    const i = words.indexOf(name);
    const value = i === -1 ? undefined : words[i + 1];
    if (value === undefined) throw new HaproxyConfigError(`default-server of "defaults" must set "${name}"`);
    return value;
  };
  const count = (name: string): number => {
    const n = Number(param(name));
    if (!Number.isInteger(n) || n < 1) throw new HaproxyConfigError(`${name} must be a positive integer`);
    return n;
  };
  const timeoutValue = (name: string): number =>
    parseHaproxyTime((lines[timeoutLine(lines, name)] ?? '').trim().split(/\s+/)[2] ?? '');
  sectionOf(lines, `backend ${COLLECTORS_BACKEND}`);
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
    serverTemplates: serverTemplatesOf(lines).map(({ line: _line, ...t }) => t),
    frontends: sectionsOf(lines)
      .map((x) => x.header.split(' '))
      .filter(([kind]) => kind === 'frontend')
      .map(([, name]) => name ?? ''),
  };
}

/** One local collector, as the rendered config addresses it. */
export interface LocalServer {
  /** Server number: the name is `<template prefix><index>`, e.g. `collector2`. */
  readonly index: number;
  /**
   * Its loopback port for each port the templates name (the API's 8080, OTLP's 4318; health
   * check ports included), e.g. `{ 8080: 40001, 4318: 40002 }`.
   */
  readonly ports: Readonly<Record<number, number>>;
}

export interface DeriveOptions {
  /** Address of every frontend by name, e.g. `{ ingest: '127.0.0.1:8080', ... }`. */
  readonly binds: Readonly<Record<string, string>>;
  /** Host the local collectors listen on. Default 127.0.0.1. */
  readonly serverHost?: string;
  readonly servers: readonly LocalServer[];
  /** Tests only: check timing written instead of the file's (same formula, shorter values). */
  readonly timing?: CheckTiming;
  /** Tests only: `timeout http-keep-alive` instead of the file's (milliseconds). */
  readonly httpKeepAliveMs?: number;
}

const SAFE_ADDRESS = /^[A-Za-z0-9_.:[\]-]+$/;

/** The haproxy.cfg text rendered for loopback (see the module comment). */
export function deriveHaproxyConfig(template: string, o: DeriveOptions): string {
  if (o.servers.length === 0) throw new HaproxyConfigError('at least one server is needed');
  const host = o.serverHost ?? '127.0.0.1';
  for (const a of [host, ...Object.values(o.binds)]) {
    if (!SAFE_ADDRESS.test(a)) throw new HaproxyConfigError(`bad address "${a}"`);
  }
  const lines = template.split('\n');
  const replace = (i: number, text: string): void => {
    lines[i] = indentOf(lines[i] ?? '') + text;
  };

  for (const section of sectionsOf(lines)) {
    const [kind, name] = section.header.split(' ');
    if (kind !== 'frontend' || name === undefined) continue;
    const bind = o.binds[name];
    if (bind === undefined) throw new HaproxyConfigError(`no address given for frontend "${name}"`);
    replace(onlyLine(lines, section, 'bind'), `bind ${bind}`);
  }

  if (o.timing) {
    const { index, words } = defaultServerWords(lines);
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
    replace(index, words.join(' '));
    replace(timeoutLine(lines, 'check'), `timeout check ${formatHaproxyTime(o.timing.timeoutCheckMs)}`);
  }
  if (o.httpKeepAliveMs !== undefined) {
    replace(
      timeoutLine(lines, 'http-keep-alive'),
      `timeout http-keep-alive ${formatHaproxyTime(o.httpKeepAliveMs)}`,
    );
  }

  // Server lines last, from the bottom up: each template turns one line into several.
  sectionOf(lines, `backend ${COLLECTORS_BACKEND}`);
  const templates = serverTemplatesOf(lines);
  if (!templates.some((t) => t.backend === COLLECTORS_BACKEND)) {
    throw new HaproxyConfigError(`"backend ${COLLECTORS_BACKEND}" has no server-template line to render`);
  }
  for (const t of [...templates].reverse()) {
    if (o.servers.length > t.count) {
      throw new HaproxyConfigError(
        `backend ${t.backend}: its server-template makes at most ${t.count} servers (asked for ${o.servers.length})`,
      );
    }
    const portOf = (s: LocalServer, port: number): number => {
      const local = s.ports[port];
      if (local === undefined)
        throw new HaproxyConfigError(`backend ${t.backend}: no local port given for port ${port}`);
      return local;
    };
    const rendered = o.servers.map((s) => {
      const params = t.params.map((word, i) =>
        t.params[i - 1] === 'port' ? String(portOf(s, Number(word))) : word,
      );
      return [`server ${t.prefix}${s.index}`, `${host}:${portOf(s, t.port)}`, ...params].join(' ');
    });
    const indent = indentOf(lines[t.line] ?? '');
    lines.splice(t.line, 1, ...rendered.map((r) => indent + r));
  }

  const overridden = o.timing !== undefined || o.httpKeepAliveMs !== undefined;
  const header = overridden
    ? '# Rendered from haproxy.cfg by a test: addresses, check timing and keep-alive timeout differ.'
    : '# Rendered by `sluice cluster` from haproxy.cfg: only the addresses differ. Do not edit.';
  return [header, ...lines].join('\n');
}
