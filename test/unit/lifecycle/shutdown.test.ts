import { createLogger } from '../../../src/log/logger';
import { createMetrics } from '../../../src/metrics/instruments';
import { Readiness } from '../../../src/lifecycle/readiness';
import { Shutdown, type ForcedExitReason } from '../../../src/lifecycle/shutdown';

/**
 * The forced path of the shutdown order: what the flush could not write is counted as dropped,
 * with the reason the path was forced, and the loss map's counts are written before the exit.
 */
function setup(flushEnds: 'never' | 'at abort') {
  const calls: string[] = [];
  let endFlush: () => void = () => undefined;
  // One flush, however often it is asked for (as the writer's `stop`).
  const flush = new Promise<void>((r) => (endFlush = r));
  let held = 4;
  let exit: (code: number) => void = () => undefined;
  const exited = new Promise<number>((resolve) => (exit = resolve));
  const shutdown = new Shutdown({
    readiness: new Readiness(createMetrics(), 'storage'),
    servers: [],
    flusher: {
      stop: () => flush,
      abort: () => {
        calls.push('abort');
        if (flushEnds === 'at abort') endFlush();
      },
      held: () => held,
      dropHeld: (reason: ForcedExitReason) => {
        calls.push(`dropHeld ${reason} (${held} held)`);
        const n = held;
        held = 0;
        return n;
      },
    },
    lossMap: {
      stop: async () => {
        calls.push('loss map written');
      },
    },
    closers: [{ name: 'storage', close: () => void calls.push('storage closed') }],
    drainDelayMs: 0,
    graceMs: 0,
    timeoutMs: 30,
    forcedFlushMs: 20,
    logger: createLogger('silent'),
    exit: (code) => {
      calls.push(`exit ${code}`);
      exit(code);
    },
  });
  return { shutdown, calls, exited };
}

describe('Shutdown, forced path', () => {
  it('past its timeout: gives up on retries, counts what is held as dropped (shutdown_timeout), writes the loss map, exits 1; the graceful path closes nothing under it', async () => {
    const { shutdown, calls, exited } = setup('at abort');
    shutdown.trigger('SIGTERM');
    expect(await exited).toBe(1);
    expect(calls).toEqual(['abort', 'dropHeld shutdown_timeout (4 held)', 'loss map written', 'exit 1']);
  });

  it('on a second signal: the reason is second_signal, and writes still in flight are waited for a bounded time', async () => {
    const { shutdown, calls, exited } = setup('never');
    shutdown.trigger('SIGTERM');
    shutdown.trigger('SIGTERM');
    expect(await exited).toBe(1);
    expect(calls).toEqual(['abort', 'dropHeld second_signal (4 held)', 'loss map written', 'exit 1']);
  });
});
