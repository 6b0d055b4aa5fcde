import { RawHttpClient, type PostAnswer } from './raw-http-client';

export type { PostAnswer } from './raw-http-client';

/** A keep-alive HTTP client bound to one origin (always 127.0.0.1 here). */
export interface HttpClient {
  readonly kind: 'raw-socket';
  /** POSTs a JSON body; rejects only on a transport failure (reset, refused, timeout). */
  post(path: string, body: Buffer): Promise<PostAnswer>;
  /** Opens every connection now (before a measured window). */
  connectAll(): Promise<void>;
  close(): Promise<void>;
}

/** Which client `createHttpClient` builds: recorded in the results file. */
export function httpClientKind(): HttpClient['kind'] {
  return 'raw-socket';
}

/**
 * A client with `connections` keep-alive connections to `origin`. Every run, baselines and Sluice
 * alike, uses this one client, so that its cost is the same on both sides of each ratio.
 */
export function createHttpClient(
  origin: string,
  connections: number,
  contentType = 'application/json',
): HttpClient {
  const client = new RawHttpClient(origin, connections, contentType);
  return {
    kind: 'raw-socket',
    post: (path, body) => client.post(path, body),
    connectAll: () => client.connectAll(),
    close: () => client.close(),
  };
}
