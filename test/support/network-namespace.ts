import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Another host on this machine, for tests of what a client elsewhere on the network sees: a
 * network namespace of its own, joined to this one by a veth pair on a /30 made from the test
 * process's pid (so parallel test files never share one). Needs root and iproute2
 * (`ip netns`); `why` says what stopped it when it cannot be made.
 */
export interface OtherHost {
  /** The namespace's name. */
  readonly name: string;
  /** This host's address as the other host reaches it. */
  readonly hostAddress: string;
  /** An HTTP request made inside the namespace (by curl there): status, body and nothing else. */
  fetch(
    url: string,
    init?: { method?: string; headers?: Record<string, string>; body?: string },
  ): Promise<{
    status: number;
    body: string;
  }>;
  remove(): Promise<void>;
}

/**
 * Why a namespace cannot be made here (not root, no iproute2 or curl, a sandbox without the
 * capability), or null.
 */
export function namespacesUnavailable(): string | null {
  const probe = `sluice-probe-${process.pid}`;
  try {
    execFileSync('curl', ['--version'], { stdio: 'pipe' });
    execFileSync('ip', ['netns', 'add', probe], { stdio: 'pipe' });
    execFileSync('ip', ['netns', 'del', probe], { stdio: 'pipe' });
    return null;
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    return (e.stderr?.toString().trim() || e.message).split('\n')[0] ?? 'unknown';
  }
}

export async function makeOtherHost(label: string): Promise<OtherHost> {
  const id = process.pid % 60_000;
  const name = `sluice-${label}-${process.pid}`;
  // Interface names are at most 15 characters.
  const hostIf = `sh${id}h`;
  const nsIf = `sh${id}n`;
  const net = `10.${200 + (id >> 14)}.${(id >> 6) & 0xff}.${(id & 0x3f) * 4}`;
  const [a, b, c, d] = net.split('.').map(Number) as [number, number, number, number];
  const hostAddress = `${a}.${b}.${c}.${d + 1}`;
  const otherAddress = `${a}.${b}.${c}.${d + 2}`;
  const ip = (...args: string[]) => run('ip', args);
  const inNs = (...args: string[]) => run('ip', ['netns', 'exec', name, ...args]);
  await ip('netns', 'add', name);
  try {
    await ip('link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf);
    await ip('link', 'set', nsIf, 'netns', name);
    await ip('addr', 'add', `${hostAddress}/30`, 'dev', hostIf);
    await ip('link', 'set', hostIf, 'up');
    await inNs('ip', 'addr', 'add', `${otherAddress}/30`, 'dev', nsIf);
    await inNs('ip', 'link', 'set', nsIf, 'up');
    await inNs('ip', 'link', 'set', 'lo', 'up');
  } catch (err) {
    await ip('netns', 'del', name).catch(() => undefined);
    await ip('link', 'del', hostIf).catch(() => undefined);
    throw err;
  }
  return {
    name,
    hostAddress,
    async fetch(url, init = {}) {
      // curl starts in milliseconds, a node child in hundreds of them on a busy box.
      const args = ['-sS', '-o', '-', '-w', '\n%{http_code}', '-X', init.method ?? 'GET'];
      for (const [k, v] of Object.entries(init.headers ?? {})) args.push('-H', `${k}: ${v}`);
      if (init.body !== undefined) args.push('--data-binary', init.body);
      const { stdout } = await inNs('curl', ...args, url);
      const cut = stdout.lastIndexOf('\n');
      return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
    },
    async remove() {
      // Deleting the namespace deletes its end of the pair, and with it this end.
      await ip('netns', 'del', name).catch(() => undefined);
      await ip('link', 'del', hostIf).catch(() => undefined);
    },
  };
}
