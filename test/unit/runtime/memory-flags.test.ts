import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  MAX_OLD_SPACE,
  MAX_SEMI_SPACE,
  memoryFlagArgs,
  missingMemoryFlags,
} from '../../../src/runtime/memory-flags';

const ROOT = path.resolve(__dirname, '../../..');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

describe('missingMemoryFlags', () => {
  it('adds every flag when Node got none', () => {
    expect(missingMemoryFlags([], undefined)).toEqual(memoryFlagArgs());
    expect(missingMemoryFlags(['--enable-source-maps'], '--trace-warnings')).toEqual(memoryFlagArgs());
  });

  it('keeps a value the user gave on the command line or in NODE_OPTIONS, in either spelling', () => {
    expect(missingMemoryFlags(['--max-old-space-size=2048'], undefined)).toEqual([
      `--max-semi-space-size=${MAX_SEMI_SPACE.mib}`,
    ]);
    expect(missingMemoryFlags([], '--max_semi_space_size=2  --inspect')).toEqual([
      `--max-old-space-size=${MAX_OLD_SPACE.mib}`,
    ]);
    expect(missingMemoryFlags(['--max-semi-space-size=4'], '--max-old-space-size=100')).toEqual([]);
  });

  it('does not take a longer flag with the same beginning for one of them', () => {
    expect(missingMemoryFlags(['--max-old-space-size-percentage=50'], undefined)).toEqual(memoryFlagArgs());
  });
});

describe('every launch path passes the flags of src/runtime/memory-flags.ts', () => {
  const flags = memoryFlagArgs().join(' ');

  it('npm start: on node’s command line, before the script', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe(`node ${flags} dist/src/cli.js serve`);
  });

  it('the Docker image: in NODE_OPTIONS, with node running the CLI directly', () => {
    const dockerfile = read('Dockerfile');
    const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtimeStage).toContain(`NODE_OPTIONS="${flags}"`);
    expect(runtimeStage).toContain('ENTRYPOINT ["node", "dist/src/cli.js"]');
  });

  it('docker-compose.yml: takes the image’s NODE_OPTIONS and sets no other', () => {
    const compose = read('docker-compose.yml');
    expect(compose).toMatch(/^x-collector: &collector\n {2}build: \.\n/m);
    expect(compose).not.toMatch(/^\s+NODE_OPTIONS:/m);
  });
});
