import { get } from 'node:http';

/** Status and body of a GET with its own connection, or status 0 when nothing answered in time. */
export function httpGet(
  url: string,
  timeoutMs = 1000,
  headers: Readonly<Record<string, string>> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = get(url, { agent: false, timeout: timeoutMs, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', () => resolve({ status: 0, body: '' }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, body: '' }));
  });
}

/**
 * Polls `check` every `pollMs` until it returns true, `timeoutMs` passes (throws with `what`) or
 * `abort` returns a reason to give up early (throws with it).
 */
export async function pollUntil(
  what: string,
  check: () => Promise<boolean>,
  o: { timeoutMs: number; pollMs?: number; abort?: () => string | null },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    const reason = o.abort?.() ?? null;
    if (reason !== null) throw new Error(`${what}: ${reason}`);
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${o.timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, o.pollMs ?? 50));
  }
}
