import type { Request, Response } from 'express';
import type { Registry } from 'prom-client';
import type { Readiness } from '../../lifecycle/readiness';
import { UNAVAILABLE_RETRY_AFTER_S } from '../../intake/retry-after';
import { sendJson } from '../send-json';

/** `GET /livez`: the process is alive and its event loop turns. */
export function livez() {
  return (_req: Request, res: Response): void => {
    sendJson(res, 200, { status: 'ok' });
  };
}

/** `GET /readyz`: answered from memory (background storage check), HAProxy's health check. */
export function readyz(readiness: Readiness) {
  return (_req: Request, res: Response): void => {
    const reason = readiness.notReadyReason();
    if (reason === null) {
      sendJson(res, 200, { status: 'ready' });
      return;
    }
    res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_S));
    sendJson(res, 503, { status: reason });
  };
}

/** `GET /metrics`: Prometheus text format. */
export function metricsText(registry: Registry) {
  return async (_req: Request, res: Response): Promise<void> => {
    res.setHeader('Content-Type', registry.contentType);
    res.send(await registry.metrics());
  };
}
