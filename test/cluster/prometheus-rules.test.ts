/**
 * The alert and recording rules (deploy/prometheus/sluice-rules.yml) as Prometheus's own tool
 * reads them: `promtool check rules` (syntax, templates) and `promtool test rules` (the unit tests
 * in sluice-rules.test.yml: each alert fires on its condition, after its `for`, with its labels
 * and annotations). test/cluster/prometheus*.test.ts evaluate the same rules against real
 * processes.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { requireProgram, searchFolders } from '../../src/dev-cluster/executables';
import { locateRepoFiles } from '../../src/dev-cluster/repo-files';
import { dockerCompose, serviceBlock } from '../support/compose-file';
import { RULE_FILES } from './support/dashboard-promql';

const promtool = requireProgram('promtool', 'prometheus', searchFolders(process.env.PATH));

function run(args: readonly string[]) {
  const r = spawnSync(promtool, args, { encoding: 'utf8', cwd: path.dirname(RULE_FILES[0] ?? '') });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('the Prometheus rules', () => {
  it('pass promtool check rules', () => {
    const r = run(['check', 'rules', ...RULE_FILES]);
    expect(r).toEqual({ status: 0, output: expect.stringMatching(/SUCCESS: \d+ rules found/) });
  });

  it('pass their unit tests (promtool test rules)', () => {
    const r = run(['test', 'rules', 'sluice-rules.test.yml']);
    expect(r).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
  });

  it('are each documented in docs/monitoring.md, and only those', () => {
    const root = locateRepoFiles().root;
    const rules = RULE_FILES.map((f) => readFileSync(f, 'utf8')).join('\n');
    const docs = readFileSync(path.join(root, 'docs/monitoring.md'), 'utf8');
    const alerts = [...rules.matchAll(/^\s+- alert: (\S+)$/gm)].map((m) => m[1]);
    const documented = [...docs.matchAll(/^\| `(Sluice\w+)`/gm)].map((m) => m[1]);
    expect(documented).toEqual(alerts);
    for (const record of [...rules.matchAll(/^\s+- record: (\S+)$/gm)].map((m) => m[1] ?? ''))
      expect(docs).toContain(`\`${record}`);
  });

  it('are loaded by the compose Prometheus: its config names them and the file is mounted beside it', () => {
    const config = path.join(locateRepoFiles().root, 'deploy/prometheus/prometheus.yml');
    const r = run(['check', 'config', config]);
    expect(r).toEqual({
      status: 0,
      output: expect.stringMatching(/SUCCESS: 1 rule files found[^]*SUCCESS: \d+ rules found/),
    });
    const compose = dockerCompose(['config']);
    expect(compose.status).toBe(0);
    const volumes = serviceBlock(compose.stdout, 'prometheus');
    expect(volumes).toContain('deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    expect(volumes).toContain('deploy/prometheus/sluice-rules.yml:/etc/prometheus/sluice-rules.yml:ro');
  });
});
