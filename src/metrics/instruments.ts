import { getHeapStatistics } from 'node:v8';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { counter, gauge, histogram } from './define';

/** Bounds of `nodejs_gc_duration_seconds` (seconds). */
const GC_DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 1, 2, 5];

/**
 * Every instrument the collector exports, owned here and fed by the
 * components. Labels take values from small fixed sets only (event type,
 * lane, reason code, route template, status): never app names or ids.
 */
export function createMetrics(registry: Registry = new Registry()) {
  // Scavenge pauses are what reads add to ingest's wait: 5 and 25 ms bounds tell a pause a request
  // notices from one it does not (prom-client's defaults jump from 1 ms to 10 ms to 100 ms).
  collectDefaultMetrics({ register: registry, gcDurationBuckets: GC_DURATION_BUCKETS });
  const r = [registry];
  const collectHooks: Array<() => void> = [];
  return {
    registry,
    /** Runs `hook` at every scrape, before the lane gauges are read: components refresh their gauges there. */
    onCollect(hook: () => void): void {
      collectHooks.push(hook);
    },
    eventsReceived: counter(
      registry,
      'sluice_events_received_total',
      'Events received in POST /v1/events bodies that parsed, by type (invalid type: "unknown").',
      ['type'],
    ),
    eventsAccepted: counter(
      registry,
      'sluice_events_accepted_total',
      'Events admitted to a lane (answered 202 for them), by type and lane.',
      ['type', 'lane'],
    ),
    eventsRejected: counter(
      registry,
      'sluice_events_rejected_total',
      'Events rejected as invalid, by reason code.',
      ['reason'],
    ),
    eventsThrottled: counter(
      registry,
      'sluice_events_throttled_total',
      'Valid events not taken (429), by reason and type.',
      ['reason', 'type'],
    ),
    eventsStored: counter(registry, 'sluice_events_stored_total', 'Events committed to storage, by lane.', [
      'lane',
    ]),
    eventsDeduplicated: counter(
      registry,
      'sluice_events_deduplicated_total',
      'Events written whose (id, ts) was already stored (retries): skipped by the write, or (metric samples on PostgreSQL) removed by the merge_metric_blocks job.',
    ),
    eventsDropped: counter(
      registry,
      'sluice_events_dropped_total',
      'Events the writer gave up on after admission, by reason (storage_rejected: the database refused the row; shutdown_timeout, second_signal, shutdown_error: held at a forced shutdown).',
      ['reason'],
    ),
    requestsRejected: counter(
      registry,
      'sluice_requests_rejected_total',
      'Ingest requests refused as a whole, by error code.',
      ['code'],
    ),
    heapLimit: gauge(
      registry,
      'sluice_heap_limit_bytes',
      'V8 heap limit of this process (old generation cap plus the young generation): what its memory flags (--max-old-space-size, --max-semi-space-size) give.',
      [],
      function (this: Gauge) {
        this.set(getHeapStatistics().heap_size_limit);
      },
    ),
    eventLoopLag: gauge(
      registry,
      'sluice_event_loop_lag_seconds',
      'Standing event-loop lag (mean lateness of a 5 ms probe timer over 100 ms); with the wait for an ingest turn, what POST /v1/events is refused unread above (SLUICE_SHED_LAG_MS).',
    ),
    laneDepth: new Gauge({
      name: 'sluice_lane_depth_events',
      help: 'Events held by a lane (queued and in flight to storage).',
      labelNames: ['lane'] as const,
      registers: r,
      collect() {
        for (const hook of collectHooks) hook();
      },
    }),
    laneBytes: gauge(registry, 'sluice_lane_depth_bytes', 'Estimated bytes held by a lane.', ['lane']),
    laneCapacity: gauge(registry, 'sluice_lane_capacity_events', 'Event capacity of a lane.', ['lane']),
    laneShareRefusals: counter(
      registry,
      'sluice_lane_share_refusals_total',
      "Batches a lane refused (429 queue_full) because their app was over its fair share of the lane's room, by lane.",
      ['lane'],
    ),
    laneCapacityBytes: gauge(registry, 'sluice_lane_capacity_bytes', 'Byte capacity of a lane.', ['lane']),
    batchSize: histogram(
      registry,
      'sluice_batch_size_events',
      'Events per storage write.',
      [],
      [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
    ),
    flushDuration: histogram(
      registry,
      'sluice_flush_duration_seconds',
      'Duration of one successful storage write (one transaction).',
      [],
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    ),
    writeErrors: counter(
      registry,
      'sluice_write_errors_total',
      'Failed storage writes, by kind (transient: retried; permanent: batch split to isolate the bad row).',
      ['kind'],
    ),
    writeRedos: counter(
      registry,
      'sluice_write_duplicate_redos_total',
      'Batches whose fast COPY met an (id, ts) already stored and were written again through the deduplicating path.',
    ),
    writeRetries: counter(
      registry,
      'sluice_write_retries_total',
      'Storage writes retried after a transient failure.',
    ),
    draining: gauge(registry, 'sluice_draining', '1 while the collector is shutting down.'),
    httpDuration: histogram(
      registry,
      'sluice_http_request_duration_seconds',
      'HTTP request duration by route template, method and status.',
      ['route', 'method', 'status'],
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    ),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * Puts the writer's counters that alerts and panels read with `rate()` / `increase()` at 0 before
 * anything happens: a labelled counter has no series until its first increment, and Prometheus
 * cannot see that first increment as an increase. For the processes that write: a collector of
 * tiers 1–3 (which drops refused rows) and a worker (which dead-letters them instead).
 */
export function presetWriterSeries(metrics: Metrics, o: { dropsRows: boolean }): void {
  for (const kind of ['transient', 'permanent'] as const) metrics.writeErrors.inc({ kind }, 0);
  if (o.dropsRows) metrics.eventsDropped.inc({ reason: 'storage_rejected' }, 0);
}
