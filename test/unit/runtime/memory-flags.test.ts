import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  commandLineOnlyFlagArgs,
  INITIAL_OLD_SPACE,
  MAX_OLD_SPACE,
  MAX_SEMI_SPACE,
  memoryFlagArgs,
  missingMemoryFlags,
  nodeOptionsFlagArgs,
} from '../../../src/runtime/memory-flags';

const ROOT = path.resolve(__dirname, '../../..');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

describe('missingMemoryFlags', () => {
  it('adds every flag when Node got none', () => {
    expect(missingMemoryFlags([], undefined)).toEqual(memoryFlagArgs());
    expect(missingMemoryFlags(['--enable-source-maps'], '--trace-warnings')).toEqual(memoryFlagArgs());
  });

  it('keeps a value the user gave on the command line or in NODE_OPTIONS, in either spelling', () => {
    const initial = `--initial-old-space-size=${INITIAL_OLD_SPACE.mib}`;
    expect(missingMemoryFlags(['--max-old-space-size=2048'], undefined)).toEqual([
      `--max-semi-space-size=${MAX_SEMI_SPACE.mib}`,
      initial,
    ]);
    expect(missingMemoryFlags([], '--max_semi_space_size=2  --inspect')).toEqual([
      `--max-old-space-size=${MAX_OLD_SPACE.mib}`,
      initial,
    ]);
    expect(missingMemoryFlags(['--max-semi-space-size=4'], '--max-old-space-size=100')).toEqual([initial]);
    expect(
      missingMemoryFlags(
        ['--max-semi-space-size=4', '--initial_old_space_size=16'],
        '--max-old-space-size=100',
      ),
    ).toEqual([]);
  });

  it('does not take a longer flag with the same beginning for one of them', () => {
    expect(missingMemoryFlags(['--max-old-space-size-percentage=50'], undefined)).toEqual(memoryFlagArgs());
  });
});

describe('every launch path passes the flags of src/runtime/memory-flags.ts', () => {
  const flags = memoryFlagArgs().join(' ');

  it('npm start: on node’s command line, before the script', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe(`exec node ${flags} dist/src/cli.js serve`);
  });

  it('the Docker image: in NODE_OPTIONS, and on the command line of the node running the CLI what Node refuses there', () => {
    const dockerfile = read('Dockerfile');
    const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtimeStage).toContain(`NODE_OPTIONS="${nodeOptionsFlagArgs().join(' ')}"`);
    const entrypoint = ['node', ...commandLineOnlyFlagArgs(), 'dist/src/cli.js'].map((a) => `"${a}"`);
    expect(runtimeStage).toContain(`ENTRYPOINT [${entrypoint.join(', ')}]`);
    expect([...nodeOptionsFlagArgs(), ...commandLineOnlyFlagArgs()].sort()).toEqual(
      [...memoryFlagArgs()].sort(),
    );
  });

  it('Node takes the NODE_OPTIONS flags there, and refuses the others there (else they belong in NODE_OPTIONS)', () => {
    const run = (nodeOptions: string) =>
      spawnSync(process.execPath, ['-e', ''], { env: { ...process.env, NODE_OPTIONS: nodeOptions } });
    expect(run(nodeOptionsFlagArgs().join(' ')).status).toBe(0);
    for (const flag of commandLineOnlyFlagArgs()) {
      const refused = run(flag);
      expect(refused.status).not.toBe(0);
      expect(refused.stderr.toString()).toContain('is not allowed in NODE_OPTIONS');
    }
  });

  it('docker-compose.yml: takes the image’s NODE_OPTIONS and sets no other', () => {
    const compose = read('docker-compose.yml');
    expect(compose).toMatch(/^x-collector: &collector\n {2}build: \.\n/m);
    expect(compose).not.toMatch(/^\s+NODE_OPTIONS:/m);
  });
});
