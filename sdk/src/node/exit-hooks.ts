import type { Client } from '../index';

export interface ExitHookOptions {
  /** Signals that flush and close the client before the process ends. Default `['SIGTERM', 'SIGINT']`. */
  readonly signals?: readonly NodeJS.Signals[];
  /** Longest the exit flush may take (milliseconds); what is left is saved to persistence. Default 2000. */
  readonly timeoutMs?: number;
}

/**
 * Sends or saves what the client holds when the process is about to end
 * (Node only). The client's pending `flush()` and `close()` keep the
 * process alive until they resolve, so the hooks need no timer of their own:
 *
 * - `beforeExit` (the event loop ran dry): flushes, bounded by `timeoutMs`
 *   (what is left is saved to persistence), and again on a later
 *   `beforeExit` only if new events were captured — so a collector that is
 *   down cannot keep the process alive forever;
 * - each of `signals`: closes the client (flush bounded by `timeoutMs`,
 *   persist the rest), then, when no other listener handles that signal,
 *   re-raises it so the process ends as it would have without the SDK.
 *   When the host has its own handler, the host decides when to exit.
 *
 * Returns the function that removes the hooks.
 */
export function installExitHooks(client: Client, options: ExitHookOptions = {}): () => void {
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const timeoutMs = options.timeoutMs ?? 2000;
  let flushedAt = -1;
  let flushing = false;

  const onBeforeExit = (): void => {
    const s = client.stats();
    if (flushing || s.captured === flushedAt || (s.buffered.total === 0 && s.aggregating === 0)) return;
    flushing = true;
    flushedAt = s.captured;
    void client.flush({ timeoutMs }).finally(() => {
      flushing = false;
    });
  };

  const onSignal = (signal: NodeJS.Signals): void => {
    void client.close({ timeoutMs }).finally(() => {
      if (process.listenerCount(signal) === 1) {
        remove();
        process.kill(process.pid, signal);
      }
    });
  };

  process.on('beforeExit', onBeforeExit);
  for (const signal of signals) process.on(signal, onSignal);
  const remove = (): void => {
    process.off('beforeExit', onBeforeExit);
    for (const signal of signals) process.off(signal, onSignal);
  };
  return remove;
}
