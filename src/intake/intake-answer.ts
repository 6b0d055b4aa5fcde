import type { RejectionReason } from '../events/rejection';

export interface RejectedEntry {
  readonly index: number;
  readonly reason: RejectionReason;
  readonly field?: string;
  /**
   * What to do about it (`events/rejection.ts`), on the first entry of each reason in a request:
   * an answer stays about as small as its request, however many events share the fault.
   */
  readonly hint?: string;
}

/**
 * The share of an app's events (not errors) the collector can take now: the rate its SDK is
 * advised to sample at (sampling-advice.ts; docs/http-api.md, "Sampling advice").
 */
export interface AppAdvice {
  readonly app: string;
  /** In (0, 1]. */
  readonly sampleRate: number;
}

/** Why valid events were not admitted. */
export type ThrottleReason = 'rate_limited' | 'queue_full';

/** What one ingest request came to; the HTTP layer only maps it. Wire contract: docs/ARCHITECTURE.md, answers table. */
export type IntakeAnswer =
  | {
      readonly kind: 'admitted';
      readonly accepted: number;
      readonly rejected: readonly RejectedEntry[];
      /** For an SDK's request (it carried a client report) every app's; else those below 1. */
      readonly advice: readonly AppAdvice[];
    }
  | {
      readonly kind: 'throttled';
      readonly accepted: number;
      readonly rejected: readonly RejectedEntry[];
      readonly throttled: readonly number[];
      readonly reason: ThrottleReason;
      /**
       * Every throttled event was refused by its app's rate limit (none by a lane or storage): a
       * `whole` request's refused apps, which a front without a per-record retry list reports as
       * refused while the rest of the request is admitted.
       */
      readonly limitedOnly: boolean;
      readonly retryAfterSeconds: number;
      readonly advice: readonly AppAdvice[];
    }
  | {
      /** `SLUICE_ACK=stored` and the commit did not come in time (or storage is known down). */
      readonly kind: 'unavailable';
      readonly retryAfterSeconds: number;
    };
