import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { findProgram, searchFolders } from '../../src/dev-cluster/executables';
import { locateRepoFiles } from '../../src/dev-cluster/repo-files';

/** `docker-compose <args>` on the repository's docker-compose.yml: exit status and output. */
export function dockerCompose(args: readonly string[], env: Record<string, string> = {}) {
  const compose = findProgram('docker-compose', searchFolders(process.env.PATH));
  if (compose === null) throw new Error('docker-compose is not installed: apt-get install -y docker-compose');
  const r = spawnSync(compose, ['-f', path.join(locateRepoFiles().root, 'docker-compose.yml'), ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The lines of one service in `docker-compose config` output (two-space indented YAML). */
export function serviceBlock(config: string, service: string): string {
  const lines = config.split('\n');
  const start = lines.indexOf(`  ${service}:`);
  if (start === -1) throw new Error(`no service ${service} in:\n${config}`);
  const end = lines.findIndex((l, i) => i > start && /^ {2}\S/.test(l));
  return lines.slice(start, end === -1 ? undefined : end).join('\n');
}

/** The items of a block sequence `key:` of a service block (`- item` lines under it). */
export function serviceList(block: string, key: string): string[] {
  const lines = block.split('\n');
  const start = lines.indexOf(`    ${key}:`);
  if (start === -1) return [];
  const items: string[] = [];
  for (const line of lines.slice(start + 1)) {
    const m = /^ {4}- (.*)$/.exec(line);
    if (!m) break;
    items.push((m[1] ?? '').replace(/^(['"])(.*)\1$/, '$2'));
  }
  return items;
}

/** The value of `key` in a service's `environment:` mapping, or undefined. */
export function serviceEnv(block: string, key: string): string | undefined {
  const m = new RegExp(`\\n {6}${key}: (.*)`).exec(block);
  return m?.[1]?.replace(/^(['"])(.*)\1$/, '$2');
}
