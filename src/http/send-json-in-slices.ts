import type { Response } from 'express';
import { stringifyInSlices } from '../read/json-in-slices';
import type { NextSlice } from '../read/read-slices';

/**
 * Express's `res.json(value)`, the same answer (body and headers), with the JSON built in slices
 * of the read turns (`stringifyInSlices`): how every read route answers.
 */
export async function sendJsonInSlices(res: Response, value: unknown, nextSlice: NextSlice): Promise<void> {
  const body = (await stringifyInSlices(value, nextSlice)) ?? '';
  if (!res.get('Content-Type')) res.set('Content-Type', 'application/json');
  res.send(body);
}
