import { createLogger } from '../../../src/log/logger';
import { createMetrics } from '../../../src/metrics/instruments';
import type { LaneName } from '../../../src/intake/event-sink';
import { writeWithRetry, type WriteWithRetryOptions } from '../../../src/writer/write-with-retry';
import type { StorageRow, WriteResult } from '../../../src/storage/port';

interface Item {
  readonly row: StorageRow;
  readonly lane: LaneName;
  readonly id: string;
}

const item = (id: string, lane: LaneName = 'standard'): Item => ({
  row: id as unknown as StorageRow,
  lane,
  id,
});

/** Rows are ids; `poison` ids are refused (SQLSTATE 22P02), `failures` are thrown first, in order. */
function scripted(poison: string[] = [], failures: Error[] = []) {
  const writes: string[][] = [];
  const write = async (rows: readonly StorageRow[]): Promise<WriteResult> => {
    const ids = rows as unknown as string[];
    const next = failures.shift();
    if (next) throw next;
    if (ids.some((id) => poison.includes(id))) {
      throw Object.assign(new Error('invalid input'), { code: '22P02' });
    }
    writes.push([...ids]);
    return { inserted: ids.length };
  };
  return { writes, write };
}

function options(
  write: WriteWithRetryOptions<Item>['write'],
  extra: Partial<WriteWithRetryOptions<Item>> = {},
): WriteWithRetryOptions<Item> {
  return {
    write,
    onRefused: () => undefined,
    backoff: { baseMs: 1, maxMs: 2 },
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    aborted: () => false,
    metrics: createMetrics(),
    logger: createLogger('silent'),
    ...extra,
  };
}

describe('writeWithRetry', () => {
  it('retries transient failures with the whole batch, then counts what was stored per lane', async () => {
    const { writes, write } = scripted([], [new Error('connection reset'), new Error('timeout')]);
    const o = options(write);
    const outcome = await writeWithRetry([item('e', 'error'), item('a'), item('b')], o);
    expect(outcome).toEqual({
      settled: true,
      stored: [item('e', 'error'), item('a'), item('b')],
      refused: [],
    });
    expect(writes).toEqual([['e', 'a', 'b']]);
    expect((await o.metrics.writeRetries.get()).values[0]?.value).toBe(2);
    const stored = (await o.metrics.eventsStored.get()).values;
    expect(stored.find((v) => v.labels.lane === 'error')?.value).toBe(1);
    expect(stored.find((v) => v.labels.lane === 'standard')?.value).toBe(2);
  });

  it('bisects a refused batch: only the refused rows reach onRefused, the rest are committed', async () => {
    const { writes, write } = scripted(['p', 'q']);
    const refused: string[] = [];
    const committed: string[] = [];
    const o = options(write, {
      onRefused: (i) => void refused.push(i.id),
      onStored: (part) => committed.push(...part.map((i) => i.id)),
    });
    const ids = ['a', 'b', 'p', 'c', 'd', 'e', 'q', 'f'];
    const outcome = await writeWithRetry(
      ids.map((id) => item(id)),
      o,
    );
    expect(refused).toEqual(['p', 'q']);
    expect(writes.flat().sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(committed.sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(outcome.settled && outcome.stored.map((i) => i.id).sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(outcome.settled && outcome.refused.map((i) => i.id)).toEqual(['p', 'q']);
  });

  it('ends retries once aborted: not settled, nothing written', async () => {
    const failures = Array.from({ length: 1000 }, () => new Error('down'));
    const { writes, write } = scripted([], failures);
    let aborted = false;
    const o = options(write, {
      aborted: () => aborted,
      sleep: async () => {
        if (failures.length < 995) aborted = true;
      },
    });
    expect(await writeWithRetry([item('a')], o)).toEqual({ settled: false, stored: [], refused: [] });
    expect(writes).toEqual([]);
    expect(failures.length).toBeGreaterThan(900);
  });
});
