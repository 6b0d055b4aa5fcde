import type { Request, Response } from 'express';
import { SluiceError } from '../../errors/catalogue';
import type { IntakeService } from '../../intake/intake-service';
import { exceedsJsonDepth } from '../json-depth';
import { isJsonContentType, readBody } from '../read-body';
import { sendJson } from '../send-json';
import type { TurnQueue } from '../../intake/turn-queue';

export interface PostEventsOptions {
  readonly ingest: Pick<IntakeService, 'ingest'>;
  /** Largest body after decompression (bytes). */
  readonly maxBodyBytes: number;
  /** Deepest array/object nesting accepted. */
  readonly maxJsonDepth: number;
  /** Turns for the CPU-heavy part (parse, validate, admit); see turn-queue.ts. */
  readonly turns: Pick<TurnQueue, 'take'>;
}

/** `POST /v1/events`: parse, hand the events to the ingest service, map its outcome (docs/ARCHITECTURE.md answers table). */
export function postEvents(o: PostEventsOptions) {
  return async (req: Request, res: Response): Promise<void> => {
    if (!isJsonContentType(req.headers['content-type'])) {
      throw new SluiceError('unsupported_media_type');
    }
    const body = await readBody(req, o.maxBodyBytes);
    await o.turns.take();
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      throw new SluiceError('invalid_json');
    }
    if (exceedsJsonDepth(parsed, o.maxJsonDepth)) {
      throw new SluiceError('too_deep', `Body nests deeper than ${o.maxJsonDepth} levels.`);
    }
    const events = (parsed as { events?: unknown } | null)?.events;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Array.isArray(events)) {
      throw new SluiceError('invalid_body');
    }

    const outcome = await o.ingest.ingest(events, req.principal ?? null);
    switch (outcome.kind) {
      case 'taken':
        sendJson(res, 202, { accepted: outcome.accepted, rejected: outcome.rejected });
        return;
      case 'throttled':
        res.setHeader('Retry-After', String(outcome.retryAfterSeconds));
        sendJson(res, 429, {
          accepted: outcome.accepted,
          rejected: outcome.rejected,
          throttled: outcome.throttled,
          error: outcome.reason,
        });
        return;
      case 'unavailable':
        throw new SluiceError('storage_unavailable', undefined, outcome.retryAfterSeconds);
    }
  };
}
