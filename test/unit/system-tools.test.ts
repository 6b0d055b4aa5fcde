import { installCommand, planSystemTools } from '../support/system-tools/install-plan';
import { ensureSystemTools } from '../support/system-tools/ensure-system-tools';
import { REQUIRED_TOOLS, type SystemTool } from '../support/system-tools/required-tools';

/** A tool whose presence the test decides. */
function tool(name: string, installed: () => boolean): SystemTool {
  return {
    name,
    debianPackage: `${name}-pkg`,
    neededBy: `${name} tests`,
    locate: () => (installed() ? `/usr/bin/${name}` : null),
  };
}

describe('system tools before npm test', () => {
  it('lists haproxy, prometheus, promtool, chromium, nats-server, docker-compose and the Sentry Python SDK with their Debian packages', () => {
    expect(REQUIRED_TOOLS.map((t) => [t.name, t.debianPackage])).toEqual([
      ['haproxy', 'haproxy'],
      ['prometheus', 'prometheus'],
      ['promtool', 'prometheus'],
      ['chromium', 'chromium'],
      ['nats-server', 'nats-server'],
      ['docker-compose', 'docker-compose'],
      ['python3-sentry-sdk', 'python3-sentry-sdk'],
    ]);
  });

  it('runs jest at once when nothing is missing', () => {
    expect(planSystemTools([], { isRoot: false, hasAptGet: false })).toEqual({ kind: 'ready' });
  });

  it('as root with apt-get: installs exactly the missing packages, saying why', () => {
    const missing = [tool('haproxy', () => false), tool('chromium', () => false)];
    const plan = planSystemTools(missing, { isRoot: true, hasAptGet: true });
    expect(plan).toEqual({
      kind: 'install',
      packages: ['haproxy-pkg', 'chromium-pkg'],
      announcement: expect.stringMatching(
        /^npm test: installing haproxy-pkg, chromium-pkg with apt-get .*haproxy for the haproxy tests; chromium for the chromium tests/,
      ),
    });
  });

  it('without root: stops with the exact command for each missing tool', () => {
    const plan = planSystemTools([tool('haproxy', () => false), tool('prometheus', () => false)], {
      isRoot: false,
      hasAptGet: true,
    });
    expect(plan.kind).toBe('stop');
    const message = plan.kind === 'stop' ? plan.message : '';
    expect(message).toContain('sudo apt-get install -y haproxy-pkg');
    expect(message).toContain('sudo apt-get install -y prometheus-pkg');
    expect(message).toContain('sudo apt-get update && sudo apt-get install -y haproxy-pkg prometheus-pkg');
    expect(message).toMatch(/only when run as root/);
  });

  it('without apt-get: names the Debian packages and says apt-get is not there', () => {
    const plan = planSystemTools([tool('haproxy', () => false)], { isRoot: true, hasAptGet: false });
    expect(plan.kind === 'stop' && plan.message).toMatch(/apt-get is not available here/);
    expect(installCommand('haproxy', true)).toBe('apt-get install -y haproxy');
  });

  it('installs, checks again, and lets jest start once every tool is there', () => {
    let installed = false;
    const said: string[] = [];
    const installs: string[][] = [];
    let clock = 0;
    const code = ensureSystemTools({
      tools: [tool('haproxy', () => installed), tool('chromium', () => true)],
      env: { PATH: '/usr/bin' },
      abilities: { isRoot: true, hasAptGet: true },
      install: (packages) => {
        installs.push([...packages]);
        installed = true;
        clock += 42_000;
        return { ok: true, output: '' };
      },
      say: (t) => said.push(t),
      now: () => clock,
    });
    expect(code).toBe(0);
    expect(installs).toEqual([['haproxy-pkg']]);
    expect(said).toEqual([
      expect.stringMatching(/^npm test: installing haproxy-pkg with apt-get/),
      'npm test: installed haproxy-pkg in 42 s',
    ]);
  });

  it('stops with apt-get’s last lines and the commands when the install fails', () => {
    const said: string[] = [];
    const code = ensureSystemTools({
      tools: [tool('haproxy', () => false)],
      env: {},
      abilities: { isRoot: true, hasAptGet: true },
      install: () => ({ ok: false, output: 'E: Unable to locate package haproxy-pkg\n' }),
      say: (t) => said.push(t),
      now: () => 0,
    });
    expect(code).toBe(1);
    expect(said[1]).toMatch(/could not install haproxy-pkg:\nE: Unable to locate package haproxy-pkg/);
    expect(said[1]).toContain('apt-get install -y haproxy-pkg');
  });

  it('never installs without root, and stops before jest', () => {
    const said: string[] = [];
    const code = ensureSystemTools({
      tools: [tool('haproxy', () => false)],
      env: {},
      abilities: { isRoot: false, hasAptGet: true },
      install: () => {
        throw new Error('must not install');
      },
      say: (t) => said.push(t),
      now: () => 0,
    });
    expect(code).toBe(1);
    expect(said).toHaveLength(1);
    expect(said[0]).toContain('sudo apt-get install -y haproxy-pkg');
  });
});
