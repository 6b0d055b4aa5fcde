/** Why the console asks for a read key, in a person's words (never the API's raw message). */
export type KeyRequest = 'none' | 'ingest_key' | 'not_valid';

/**
 * What a refused key was: an ingest key (`sk_in_…`, made to send events) cannot read; anything else
 * is no read token of this collector (mistyped, revoked, or another collector's). `null`: no key
 * was given yet.
 */
export function keyRequestFor(refused: string | null): KeyRequest {
  if (refused === null) return 'none';
  return refused.startsWith('sk_in_') ? 'ingest_key' : 'not_valid';
}

export const KEY_REQUEST_TEXT: Readonly<Record<KeyRequest, string>> = {
  none: 'This collector has API keys on: its data is shown to holders of a read key only.',
  ingest_key:
    'That key is an ingest key: it lets an app send events, not read them. Give a read key (it starts with sk_rd_).',
  not_valid:
    'That key is not a read key of this collector: it may be mistyped, revoked, or made for another collector.',
};
