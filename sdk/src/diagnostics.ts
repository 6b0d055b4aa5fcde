import type { SdkErrorCode, SluiceSdkError } from './sdk-error';

/** The console methods the SDK writes with. */
export interface DiagnosticsConsole {
  warn(message: string): void;
  debug(message: string): void;
}

export interface DiagnosticsOptions {
  /** The host's handler: receives every problem, and replaces the default warnings. */
  readonly onError: ((error: SluiceSdkError) => void) | undefined;
  /** Every problem and every request's outcome go to the console. */
  readonly debug: boolean;
  /** Where a throwing (or rejecting) `onError` is counted. */
  readonly onInternalError: (err: unknown) => void;
  /** Default: the global `console`, when there is one. */
  readonly console?: DiagnosticsConsole | undefined;
}

const PREFIX = 'sluice: ';
const ONCE = ' (said once per kind of problem; set onError, or debug: true, to hear of each)';

/**
 * Where the SDK's problems go, following the conventions of the ecosystem:
 *
 * - `onError` set: it receives each problem, and nothing is printed (the host decides);
 * - `debug: true`: each problem is printed (`console.warn`), and each request's outcome
 *   (`console.debug`), on top of `onError`;
 * - otherwise: the first problem of each code is printed once per client (`console.warn`), so a
 *   wrong key or endpoint is seen without one line per request. `stats()` counts every loss.
 *
 * Nothing here throws: a throwing or rejecting `onError` is counted as an internal error.
 */
export class Diagnostics {
  private readonly warned = new Set<SdkErrorCode>();
  private readonly console: DiagnosticsConsole | undefined;

  constructor(private readonly o: DiagnosticsOptions) {
    this.console = o.console ?? (typeof console === 'object' && console !== null ? console : undefined);
  }

  /** Whether request outcomes are traced: callers build trace lines only then. */
  get tracing(): boolean {
    return this.o.debug;
  }

  report(error: SluiceSdkError): void {
    const onError = this.o.onError;
    if (onError !== undefined) {
      try {
        const result: unknown = onError(error);
        if (isThenable(result)) result.then(undefined, this.o.onInternalError);
      } catch (err) {
        this.o.onInternalError(err);
      }
    }
    if (this.o.debug) {
      this.write('warn', PREFIX + error.message);
    } else if (onError === undefined && !this.warned.has(error.code)) {
      this.warned.add(error.code);
      this.write('warn', PREFIX + error.message + ONCE);
    }
  }

  /** One line of `debug` output. */
  trace(line: string): void {
    if (this.o.debug) this.write('debug', PREFIX + line);
  }

  private write(level: 'warn' | 'debug', message: string): void {
    try {
      if (typeof this.console?.[level] === 'function') this.console[level](message);
    } catch (err) {
      this.o.onInternalError(err);
    }
  }
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}
