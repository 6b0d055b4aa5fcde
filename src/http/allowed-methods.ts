/**
 * The methods each known path answers, recorded as the app registers its routes: a request on a
 * known path with another method is `405 method_not_allowed` with `Allow` (RFC 9110 §15.5.6), not
 * a 404 that reads as a wrong URL.
 */
export class AllowedMethods {
  private readonly byPath = new Map<string, Set<string>>();

  /** Records `method` on `path`; a GET route also answers HEAD (Express does). */
  add(method: 'GET' | 'POST' | 'OPTIONS', path: string): void {
    const methods = this.byPath.get(path) ?? this.byPath.set(path, new Set()).get(path);
    methods?.add(method);
    if (method === 'GET') methods?.add('HEAD');
  }

  /** The `Allow` value of `path` (`GET, HEAD, POST`), or null when no route has that path. */
  allowOf(path: string): string | null {
    const methods = this.byPath.get(path);
    return methods === undefined ? null : [...methods].sort().join(', ');
  }
}
