import type { WireEvent } from './types';

/** Bodies shorter than this go uncompressed: gzip's header and a stream cost more than they save. */
export const GZIP_MIN_BYTES = 1024;

/** The request body of a batch. */
export function encodeBatch(events: readonly WireEvent[]): string {
  return '{"events":' + JSON.stringify(events) + '}';
}

let encoder: TextEncoder | undefined;

/** UTF-8 length of `text`, what a keepalive budget counts. */
export function utf8Length(text: string): number {
  encoder ??= new TextEncoder();
  return encoder.encode(text).length;
}

/** Whether the runtime can gzip (browsers, Node): `CompressionStream` with `Blob` and `Response`. */
export function canGzip(): boolean {
  return (
    typeof CompressionStream === 'function' && typeof Blob === 'function' && typeof Response === 'function'
  );
}

/** `text` gzip-compressed through `CompressionStream`. */
export async function gzip(text: string): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
