import type { ShutdownOptions } from '../lifecycle/shutdown';
import type { IntakeFronts, IntakeServiceOptions } from '../intake/intake-service';
import type { PipelineSources } from '../metrics/pipeline-state';

/** What every intake strategy's service shares: all but where events go and how the single pass writes them. */
export type SharedIntakeOptions = Omit<IntakeServiceOptions, 'sink' | 'rowFromScan'>;

/**
 * One intake strategy, started: what the collector's fronts hand their events to, and what the
 * shutdown sequence flushes. Tiers 1–3 hold events in lanes (lane-intake.ts), tier 4 publishes
 * them to JetStream (queue-intake.ts).
 */
export interface Intake {
  /**
   * The intake service of this strategy: its sink, with the single pass writing what that sink
   * holds (storage rows, or message elements), so the two are paired where both are made.
   */
  service(shared: SharedIntakeOptions): IntakeFronts;
  /** The shutdown sequence's "flush" step (see src/lifecycle/shutdown.ts). */
  readonly flusher: ShutdownOptions['flusher'];
  /** Closed after the flush, in order, before storage. */
  readonly closers: ReadonlyArray<{ name: string; close(): Promise<void> | void }>;
  /** What the pipeline state reads of this intake. */
  readonly state: Pick<PipelineSources, 'lanes' | 'writer' | 'queue'>;
  /** The read barrier (`http/read-barrier.ts`); absent when this process holds no events. */
  readonly acknowledgedSettled?: () => Promise<void> | null;
}
