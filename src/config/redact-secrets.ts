/** What a password is printed as. */
export const REDACTED = '***';

/**
 * `value` with any password it carries replaced by `***`, for error messages and logs: the
 * userinfo password of a URL (`postgres://user:secret@host` → `postgres://user:***@host`) and a
 * `password=` parameter (libpq query string or key/value form). Works on text that is not a valid
 * URL too: a value is most often printed because it did not parse, and an unencoded `@`, `/` or
 * `#` in a password is a common reason. The userinfo is taken to end at the last `@` before the
 * host, so a password with an unencoded `@` is masked whole.
 */
export function redactSecrets(value: string): string {
  return value
    .replace(/^(\s*[a-z][a-z0-9+.-]*:\/\/[^:@/]*):(.*)@(?=[^@]*$)/i, `$1:${REDACTED}@`)
    .replace(/(password\s*=\s*)('[^']*'|[^&\s]*)/gi, `$1${REDACTED}`);
}
