import type { Request, Response } from 'express';
import type { PipelineState } from '../../metrics/pipeline-state';

/** `GET /pipeline`: this collector's pipeline state, sampled every second (see pipeline-state.ts). */
export function getPipeline(state: Pick<PipelineState, 'snapshot'>) {
  return (_req: Request, res: Response): void => {
    res.setHeader('Cache-Control', 'no-store');
    res.json(state.snapshot());
  };
}
