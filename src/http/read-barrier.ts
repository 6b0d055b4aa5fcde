import type { NextFunction, Request, RequestHandler, Response } from 'express';

export interface ReadBarrierOptions {
  /**
   * Settles once every event this collector acknowledged so far is committed (or dropped by the
   * database); null when nothing is held, or when storage is known to be down (no wait at all).
   */
  readonly settled: () => Promise<void> | null;
  /** Longest wait (milliseconds); then the read goes ahead. */
  readonly timeoutMs: number;
}

/**
 * A read sees what was acknowledged before it: the read waits until the writer has committed every
 * event that was in this collector's lanes when the read arrived (with `SLUICE_ACK=queued` a 202
 * comes before the commit). Free when the lanes are empty; bounded by `timeoutMs`, so a database
 * that is slow or away never holds a read longer than that (the read then answers as storage
 * allows: 503 when it cannot). Per collector: docs/http-api.md, "Read API".
 */
export function readBarrier(o: ReadBarrierOptions): RequestHandler {
  return (_req: Request, _res: Response, next: NextFunction): void => {
    const settled = o.settled();
    if (settled === null) return next();
    let done = false;
    const go = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      next();
    };
    const timer = setTimeout(go, o.timeoutMs);
    void settled.then(go);
  };
}
