/**
 * HAProxy's health-check timing and the collector settings that must agree with it. haproxy.cfg
 * writes the same arithmetic in a comment; `startLocalCluster` refuses a combination that breaks
 * it, and the cluster tests derive their short timings from the same functions.
 */

/** The check parameters of haproxy.cfg (`default-server` line and `timeout check`). */
export interface CheckTiming {
  /** Interval between checks of a server that is UP (milliseconds). */
  readonly interMs: number;
  /** Interval while a server is changing state, going down or coming up (milliseconds). */
  readonly fastinterMs: number;
  /** Interval between checks of a server that is DOWN (milliseconds). */
  readonly downinterMs: number;
  /** Consecutive failed checks that mark a server DOWN. */
  readonly fall: number;
  /** Consecutive good checks that mark a server UP. */
  readonly rise: number;
  /** Longest wait for one check's answer once connected (milliseconds). */
  readonly timeoutCheckMs: number;
}

/**
 * Headroom of the drain delay over the detection window (milliseconds): covers a request
 * HAProxy dispatched just before it marked the server down.
 */
export const DRAIN_MARGIN_MS = 500;

/**
 * Longest time from `/readyz` turning 503 to HAProxy marking the server DOWN (milliseconds): the
 * last good check left just before, the next one comes `inter` later, then `fall - 1` more at
 * `fastinter`, each taking up to `timeout check`.
 */
export function detectionWindowMs(t: CheckTiming): number {
  return t.interMs + (t.fall - 1) * t.fastinterMs + t.timeoutCheckMs;
}

/** Longest time from `/readyz` turning 200 to HAProxy marking the server UP (milliseconds). */
export function recoveryWindowMs(t: CheckTiming): number {
  return t.downinterMs + (t.rise - 1) * t.fastinterMs + t.timeoutCheckMs;
}

/** The `SLUICE_DRAIN_DELAY_MS` that goes with `t`: the detection window plus the margin. */
export function drainDelayFor(t: CheckTiming): number {
  return detectionWindowMs(t) + DRAIN_MARGIN_MS;
}

/** The collector settings checked against HAProxy's. */
export interface CollectorTimeouts {
  /** `SLUICE_DRAIN_DELAY_MS`. */
  readonly drainDelayMs: number;
  /** `SLUICE_KEEP_ALIVE_TIMEOUT_MS`. */
  readonly keepAliveTimeoutMs: number;
}

/**
 * What is wrong with running collectors with `c` behind HAProxy with `timing` and
 * `httpKeepAliveMs` (`timeout http-keep-alive`); empty when nothing is.
 */
export function timingProblems(timing: CheckTiming, httpKeepAliveMs: number, c: CollectorTimeouts): string[] {
  const problems: string[] = [];
  const window = detectionWindowMs(timing);
  if (c.drainDelayMs < window) {
    problems.push(
      `SLUICE_DRAIN_DELAY_MS=${c.drainDelayMs} is shorter than HAProxy's detection window ` +
        `(inter ${timing.interMs} + (fall ${timing.fall} - 1) x fastinter ${timing.fastinterMs} + ` +
        `timeout check ${timing.timeoutCheckMs} = ${window} ms): requests would reach a closed listener; ` +
        `use at least ${window} (${drainDelayFor(timing)} with the usual margin)`,
    );
  }
  if (c.keepAliveTimeoutMs <= httpKeepAliveMs) {
    problems.push(
      `SLUICE_KEEP_ALIVE_TIMEOUT_MS=${c.keepAliveTimeoutMs} must be above HAProxy's timeout http-keep-alive ` +
        `(${httpKeepAliveMs} ms), so that HAProxy, not the collector, closes idle connections`,
    );
  }
  return problems;
}
