import { readFileSync } from 'node:fs';
import { expectedHeapLimitBytes, memoryFlagArgs } from '../../src/runtime/memory-flags';
import { startTestCluster, type TestCluster } from './support/test-cluster';

let t: TestCluster;

beforeAll(async () => {
  t = await startTestCluster('launch_flags', { collectors: 1 });
});

afterAll(async () => {
  await t?.close();
});

describe('sluice cluster', () => {
  it('starts each collector itself (no relaunch) with the memory flags on its command line', async () => {
    const [node] = t.cluster.collectors;
    const cmdline = readFileSync(`/proc/${node?.pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    expect(cmdline.slice(1, 1 + memoryFlagArgs().length)).toEqual(memoryFlagArgs());
    expect(cmdline.slice(-1)).toEqual(['serve']);
    const metrics = await (await fetch(`${node?.url}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`^sluice_heap_limit_bytes ${expectedHeapLimitBytes()}$`, 'm'));
  });
});
