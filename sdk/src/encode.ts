import type { WireReport } from './client-report';
import type { WireEvent } from './types';

/** Bodies shorter than this go uncompressed: gzip's header and a stream cost more than they save. */
export const GZIP_MIN_BYTES = 1024;

/**
 * The request body of a batch, with the client report it carries: always a `report` member (with
 * no rows when there is nothing new), which marks the events as an SDK's that reports.
 */
export function encodeBatch(events: readonly WireEvent[], report: WireReport | null = null): string {
  return '{"events":' + JSON.stringify(events) + ',"report":' + JSON.stringify(report ?? EMPTY_REPORT) + '}';
}

const EMPTY_REPORT = { rows: [] };

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
