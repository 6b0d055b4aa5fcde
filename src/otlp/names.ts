/**
 * The rule that turns an OpenTelemetry name (`GET /users/:id`, `http.server.duration`,
 * `@opentelemetry/instrumentation-http`) into a Sluice dotted name (`[A-Za-z0-9_-]` parts joined by
 * dots): every run of other characters separates two parts, empty parts vanish, case is kept.
 * `GET /users/:id` → `GET.users.id`; `http.server.duration` is unchanged. A name longer than
 * `maxLength` is cut at a part boundary (or hard, when its first part alone is too long). A name
 * with no letter or digit left takes `fallback`.
 */
export function sluiceName(otelName: string, maxLength: number, fallback: string): string {
  const parts = otelName.split(/[^A-Za-z0-9_-]+/).filter((p) => p.length > 0);
  if (parts.length === 0) return fallback;
  let name = parts.join('.');
  if (name.length > maxLength) {
    const cut = name.lastIndexOf('.', maxLength);
    name = cut > 0 ? name.slice(0, cut) : name.slice(0, maxLength);
  }
  return name;
}

/** `name` with `suffix` appended to its last part, cut so the whole stays within `maxLength`. */
export function withSuffix(name: string, suffix: string, maxLength: number): string {
  return name.length + suffix.length <= maxLength
    ? name + suffix
    : name.slice(0, maxLength - suffix.length) + suffix;
}
