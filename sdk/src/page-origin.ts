/**
 * The origin of the page (or worker) the SDK runs in (`https://shop.example.com`), or `undefined`
 * outside a browser (Node has no `location`) and for an opaque `null` origin.
 */
export function pageOrigin(): string | undefined {
  if (typeof location === 'undefined' || location === null) return undefined;
  const origin = location.origin;
  return typeof origin === 'string' && origin !== 'null' ? origin : undefined;
}

/** The origin of `url`, or `undefined` when it does not parse. */
export function originOf(url: string, base?: string): string | undefined {
  try {
    return new URL(url, base).origin;
  } catch {
    return undefined;
  }
}
