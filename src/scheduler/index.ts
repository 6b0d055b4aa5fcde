export { schedulerConfigFrom, type SchedulerConfig } from './scheduler-config';
export type { Job, JobContext, JobResult, MaintenanceSession } from './job';
export { JOB_LOCK_KEYS, JOB_NAMES, lockKeyOf, type JobName } from './lock-keys';
