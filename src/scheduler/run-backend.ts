import type { Job, JobOutcome } from './job';

/** What one attempt at running a job in the current window came to. */
export type AttemptResult =
  /** Another session holds the job's advisory lock: it is running the job right now. */
  | { readonly kind: 'lock_busy' }
  /** The window is already claimed: the job ran (or is recorded as failed) this interval. */
  | { readonly kind: 'claim_lost'; readonly nowMs: number }
  /** This instance claimed the window and ran the job; recorded and committed. */
  | {
      readonly kind: 'ran';
      readonly slotMs: number;
      readonly nowMs: number;
      readonly durationMs: number;
      readonly outcome: JobOutcome;
    }
  /** Claimed, but the job threw: its writes were rolled back, the failure recorded and committed. */
  | {
      readonly kind: 'job_failed';
      readonly slotMs: number;
      readonly nowMs: number;
      readonly durationMs: number;
      readonly error: unknown;
    };

/**
 * Lock + claim + run + record, for one storage kind. `attempt` rejects when the run's transaction
 * broke (connection lost, commit failed): then nothing of it was recorded, and on PostgreSQL
 * nothing of it was kept.
 */
export interface RunBackend {
  attempt(job: Job, intervalMs: number): Promise<AttemptResult>;
  /** Releases connections. Called once no attempt is in flight. */
  close(): Promise<void>;
}
