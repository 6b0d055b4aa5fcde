import type { ServerResponse } from 'node:http';

/**
 * Writes a JSON answer straight to Node's response: the hot routes answer thousands of times a
 * second, and Express's `res.json` (content-type lookup, freshness and ETag checks) costs more than
 * the rest of a single-event request. Headers set earlier on `res` are kept.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
