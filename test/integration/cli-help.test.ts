/** Every command has its own help, reached the ways people type it; its columns line up. */
import { runCli } from '../support/run-cli';

describe('sluice help', () => {
  it.each([['-h'], ['--help'], ['help']])(
    'sluice %s lists the commands and the options of serve',
    async (arg) => {
      const run = await runCli([arg]);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Usage: sluice \[command\]/);
      for (const command of ['serve', 'worker', 'migrate', 'cluster', 'tail', 'query', 'delete', 'key']) {
        expect(run.stdout).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
      }
      expect(run.stdout).toContain('SLUICE_QUEUE_CAPACITY');
    },
  );

  it.each([
    [['cluster', '--help'], /^Usage: sluice cluster/, /--collectors N .*\n[\s\S]*--stats-port P/],
    [['cluster', '-h'], /^Usage: sluice cluster/, /--exporter-port P/],
    [['worker', '--help'], /^Usage: sluice worker/, /SLUICE_WORKER_BATCH_SIZE/],
    [['help', 'key'], /^Usage: sluice key ingest <id> <app>/, /SLUICE_AUTH_KEYS_FILE/],
    [['help', 'migrate'], /^Usage: sluice migrate/, /SLUICE_DATABASE_URL/],
    [['tail', '-h'], /^Usage: sluice tail --app APP/, /--since DURATION/],
    [['help', 'query'], /^Usage: sluice query <what>/, /error-groups/],
    [['delete', '--help'], /^Usage: sluice delete --app APP/, /its loss-map rows/],
  ])('sluice %j shows that command’s own help', async (args, usage, flag) => {
    const run = await runCli(args);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(usage);
    expect(run.stdout).toMatch(flag);
  });

  it('aligns the flag and default columns of every setting, the longest names included', async () => {
    const run = await runCli(['--help']);
    const rows = run.stdout.split('\n').filter((l) => /^ {2}SLUICE_/.test(l));
    expect(rows.length).toBeGreaterThan(50);
    const column = (l: string, re: RegExp): number => l.search(re);
    expect(new Set(rows.map((l) => column(l, / --/)))).toEqual(new Set([column(rows[0] ?? '', / --/)]));
    expect(new Set(rows.map((l) => column(l, / default /)))).toEqual(
      new Set([column(rows[0] ?? '', / default /)]),
    );
  });

  it('names an unknown command with the closest one (exit 2)', async () => {
    const run = await runCli(['clustr']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/unknown command "clustr"; did you mean cluster\?/);
  });
});
