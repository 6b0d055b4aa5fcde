/** Where `sluice tail` and `sluice query` read: a collector's read API. */

/** `--url` when not given. */
export const DEFAULT_READ_URL = 'http://127.0.0.1:8080';
/** Variable holding the read token when `--token` is not given (kept out of `ps` and shell history). */
export const READ_TOKEN_VARIABLE = 'SLUICE_READ_TOKEN';

export const READ_TARGET_FLAGS_HELP = `  --url URL            the collector (default ${DEFAULT_READ_URL}; behind HAProxy: its address)
  --token TOKEN        a read token when API keys are on (default: $${READ_TOKEN_VARIABLE})`;

export interface ReadTarget {
  readonly url: string;
  readonly token: string | null;
}

/** GETs `path?params` and returns the JSON answer; a non-2xx answer throws its error and message. */
export async function readApi(
  target: ReadTarget,
  path: string,
  params: URLSearchParams,
  signal?: AbortSignal,
): Promise<Record<string, unknown>> {
  const url = `${target.url.replace(/\/+$/, '')}${path}?${params.toString()}`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (target.token !== null) headers.authorization = `Bearer ${target.token}`;
  let res: Response;
  try {
    res = await fetch(url, { headers, signal: signal ?? AbortSignal.timeout(30_000) });
  } catch (err) {
    throw new Error(`cannot reach ${target.url} (${(err as Error).cause ?? (err as Error).message})`, {
      cause: err,
    });
  }
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${res.status} from ${path}: ${text.slice(0, 200)}`);
  }
  if (!res.ok) {
    const what = [body.error, body.message].filter((x) => typeof x === 'string').join(': ');
    throw new Error(`${res.status} from ${path}: ${what || text.slice(0, 200)}`);
  }
  return body;
}
