/** A few of the collector's own Prometheus figures, to explain a run's throughput. */
export interface WriterFigures {
  /** Batches written. */
  readonly flushes: number;
  /** Mean batch write duration as the writer loop saw it (milliseconds). */
  readonly meanFlushMs: number;
  /** Mean events per batch. */
  readonly meanBatchEvents: number;
}

function sample(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

/** Scrapes `GET /metrics`; null when the collector does not answer it. */
export async function writerFigures(origin: string): Promise<WriterFigures | null> {
  try {
    const res = await fetch(`${origin}/metrics`, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) return null;
    const text = await res.text();
    const flushes = sample(text, 'sluice_flush_duration_seconds_count');
    return {
      flushes,
      meanFlushMs: (sample(text, 'sluice_flush_duration_seconds_sum') / flushes) * 1000,
      meanBatchEvents: sample(text, 'sluice_batch_size_events_sum') / flushes,
    };
  } catch {
    return null;
  }
}
