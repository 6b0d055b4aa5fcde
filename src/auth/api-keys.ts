import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** An authenticated caller. Ingest keys write for one app only; read tokens open the read API. */
export type Principal =
  | { readonly kind: 'ingest'; readonly keyId: string; readonly app: string }
  | { readonly kind: 'read'; readonly keyId: string };

interface StoredKey {
  readonly principal: Principal;
  readonly sha256: Buffer;
}

/** A keys file that cannot be used. The message says what is wrong and where. */
export class KeysFileError extends Error {}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const HEX_SHA256 = /^[0-9a-f]{64}$/;

export function sha256(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/**
 * The API keys a collector accepts. Only SHA-256 hashes of the secrets are
 * held (secrets are random, high-entropy tokens, so an unsalted hash is
 * enough), and a presented secret is compared with every stored hash in
 * constant time. Several keys may name the same app: that is key rotation.
 */
export class ApiKeyRing {
  private constructor(private readonly keys: readonly StoredKey[]) {}

  /**
   * Parses a keys file:
   * `{"keys": [{"id": "shop-2026-12", "kind": "ingest", "app": "web-shop", "sha256": "<hex>"},
   *            {"id": "grafana", "kind": "read", "sha256": "<hex>"}]}`
   */
  static parse(text: string, source: string): ApiKeyRing {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw new KeysFileError(`${source} is not valid JSON: ${(err as Error).message}`);
    }
    const list = (doc as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(list) || list.length === 0) {
      throw new KeysFileError(`${source} must be {"keys": [ … ]} with at least one key`);
    }
    const ids = new Set<string>();
    const keys = list.map((raw: unknown, i): StoredKey => {
      const k = (raw ?? {}) as Record<string, unknown>;
      const where = `${source}: keys[${i}]`;
      if (typeof k.id !== 'string' || !KEY_ID.test(k.id))
        throw new KeysFileError(`${where}.id must match ${KEY_ID}`);
      if (ids.has(k.id)) throw new KeysFileError(`${where}.id "${k.id}" is used twice`);
      ids.add(k.id);
      if (typeof k.sha256 !== 'string' || !HEX_SHA256.test(k.sha256)) {
        throw new KeysFileError(`${where}.sha256 must be 64 lower-case hex digits (sluice key prints one)`);
      }
      const hash = Buffer.from(k.sha256, 'hex');
      if (k.kind === 'read') return { principal: { kind: 'read', keyId: k.id }, sha256: hash };
      if (k.kind !== 'ingest') throw new KeysFileError(`${where}.kind must be "ingest" or "read"`);
      if (typeof k.app !== 'string' || k.app.length === 0) {
        throw new KeysFileError(`${where}.app is required for an ingest key`);
      }
      return { principal: { kind: 'ingest', keyId: k.id, app: k.app }, sha256: hash };
    });
    return new ApiKeyRing(keys);
  }

  /**
   * The ingest key whose id is `keyId`, or null: a Sentry DSN's public key (docs/sentry.md). An id
   * is not a secret (a browser's DSN shows it), so it names an app the way Sentry's public keys
   * do; what it may send is bounded by that app's limits.
   */
  ingestKeyById(keyId: string): Extract<Principal, { kind: 'ingest' }> | null {
    for (const k of this.keys) {
      if (k.principal.kind === 'ingest' && k.principal.keyId === keyId) return k.principal;
    }
    return null;
  }

  /** The principal a secret belongs to, or null. Time does not depend on which key (if any) matches. */
  authenticate(secret: string): Principal | null {
    const presented = sha256(secret);
    let found: Principal | null = null;
    for (const k of this.keys) {
      if (timingSafeEqual(presented, k.sha256) && found === null) found = k.principal;
    }
    return found;
  }
}

/** A new random secret and its keys-file entry. */
export function generateKey(
  kind: 'ingest' | 'read',
  id: string,
  app?: string,
): { secret: string; entry: Record<string, string> } {
  const secret = `sk_${kind === 'ingest' ? 'in' : 'rd'}_${randomBytes(24).toString('base64url')}`;
  const entry: Record<string, string> = { id, kind };
  if (app !== undefined) entry.app = app;
  entry.sha256 = sha256(secret).toString('hex');
  return { secret, entry };
}
