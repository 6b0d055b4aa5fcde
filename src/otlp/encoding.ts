/** The two OTLP/HTTP encodings, told apart by Content-Type. */
export type OtlpEncoding = 'json' | 'protobuf';

/**
 * The encoding a Content-Type names: `application/json` (charset utf-8 or none) or
 * `application/x-protobuf`; null for anything else.
 */
export function encodingOf(contentType: string | undefined): OtlpEncoding | null {
  if (contentType === undefined) return null;
  const [type, ...params] = contentType.split(';').map((p) => p.trim().toLowerCase());
  if (type === 'application/x-protobuf') return 'protobuf';
  if (type !== 'application/json') return null;
  return params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8') ? 'json' : null;
}

export const CONTENT_TYPES: Readonly<Record<OtlpEncoding, string>> = {
  json: 'application/json',
  protobuf: 'application/x-protobuf',
};
