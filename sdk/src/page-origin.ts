/**
 * The origin of the page the SDK runs in (`https://shop.example.com`), or `undefined` outside a
 * browser document (Node, a worker without `location`, an opaque `null` origin).
 */
export function pageOrigin(): string | undefined {
  if (typeof document === 'undefined' || typeof location === 'undefined') return undefined;
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
