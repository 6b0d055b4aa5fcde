import type { RunAttempt } from '../storage/maintenance';
import type { Job, JobResult } from './job';

/** What one attempt at running a job in the current window came to (see `RunAttempt`). */
export type AttemptResult = RunAttempt<JobResult>;

/**
 * Lock + claim + run + record, as the scheduler uses it: a storage's `MaintenanceRunner`
 * (src/storage/maintenance.ts) is one. `attempt` rejects when the run's transaction broke.
 */
export interface RunBackend {
  attempt(job: Job, intervalMs: number): Promise<AttemptResult>;
  /** Releases connections. Called once no attempt is in flight. */
  close(): Promise<void>;
}
