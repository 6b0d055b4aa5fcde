/**
 * A collector — `startCollector`, the assembly `sluice serve` runs — in a process started with
 * `node --expose-gc`, for tests that measure what its memory keeps. Compiled by `npm run build` to
 * dist/test/support/processes/collector-with-gc.js; configured like `sluice serve` (`SLUICE_*`).
 *
 * Spoken to over the IPC channel: it sends `{"type":"ready","url"}` once listening; on
 * `{"type":"measure"}` it runs full garbage collections and answers
 * `{"type":"memory","heapUsed","rss"}` (bytes). SIGTERM runs the real shutdown sequence.
 */
import { startCollector } from '../../../src/compose/collector';
import { loadConfig } from '../../../src/config/load';
import { createLogger } from '../../../src/log/logger';

const gc = (globalThis as { gc?: () => void }).gc;

async function main(): Promise<void> {
  if (gc === undefined || process.send === undefined) {
    throw new Error('start with node --expose-gc and an IPC channel');
  }
  const config = loadConfig(process.env);
  const collector = await startCollector(config, { logger: createLogger(config.logLevel) });
  process.on('SIGTERM', () => collector.shutdown('SIGTERM'));
  process.on('message', (msg: { type?: string }) => {
    if (msg.type !== 'measure') return;
    // Twice: the first collection can leave garbage that finalisers release for the second.
    gc();
    gc();
    const { heapUsed, rss } = process.memoryUsage();
    process.send?.({ type: 'memory', heapUsed, rss });
  });
  process.send({ type: 'ready', url: collector.url });
}

main().catch((err: unknown) => {
  process.stderr.write(`collector-with-gc: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
