/** Holds the event loop for `ms` milliseconds, as a burst of CPU-heavy requests would. */
export function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}
