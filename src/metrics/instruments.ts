import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every instrument the collector exports, owned here and fed by the
 * components. Labels take values from small fixed sets only (event type,
 * lane, reason code, route template, status): never app names or ids.
 */
export function createMetrics(registry: Registry = new Registry()) {
  collectDefaultMetrics({ register: registry });
  const r = [registry];
  const collectHooks: Array<() => void> = [];
  return {
    registry,
    /** Runs `hook` at every scrape, before the lane gauges are read: components refresh their gauges there. */
    onCollect(hook: () => void): void {
      collectHooks.push(hook);
    },
    eventsReceived: new Counter({
      name: 'sluice_events_received_total',
      help: 'Events received in POST /v1/events bodies that parsed, by type (invalid type: "unknown").',
      labelNames: ['type'] as const,
      registers: r,
    }),
    eventsAccepted: new Counter({
      name: 'sluice_events_accepted_total',
      help: 'Events admitted to a lane (answered 202 for them), by type and lane.',
      labelNames: ['type', 'lane'] as const,
      registers: r,
    }),
    eventsRejected: new Counter({
      name: 'sluice_events_rejected_total',
      help: 'Events rejected as invalid, by reason code.',
      labelNames: ['reason'] as const,
      registers: r,
    }),
    eventsThrottled: new Counter({
      name: 'sluice_events_throttled_total',
      help: 'Valid events not taken (429), by reason and type.',
      labelNames: ['reason', 'type'] as const,
      registers: r,
    }),
    eventsStored: new Counter({
      name: 'sluice_events_stored_total',
      help: 'Events committed to storage, by lane.',
      labelNames: ['lane'] as const,
      registers: r,
    }),
    eventsDeduplicated: new Counter({
      name: 'sluice_events_deduplicated_total',
      help: 'Events written whose (id, ts) was already stored (retries).',
      registers: r,
    }),
    eventsDropped: new Counter({
      name: 'sluice_events_dropped_total',
      help: 'Events the writer gave up on after admission, by reason (storage_rejected: the database refused the row).',
      labelNames: ['reason'] as const,
      registers: r,
    }),
    requestsRejected: new Counter({
      name: 'sluice_requests_rejected_total',
      help: 'Ingest requests refused as a whole, by error code.',
      labelNames: ['code'] as const,
      registers: r,
    }),
    eventLoopLag: new Gauge({
      name: 'sluice_event_loop_lag_seconds',
      help: 'Standing event-loop lag (mean lateness of a 5 ms probe timer over 100 ms); with the wait for an ingest turn, what POST /v1/events is refused unread above (SLUICE_SHED_LAG_MS).',
      registers: r,
    }),
    laneDepth: new Gauge({
      name: 'sluice_lane_depth_events',
      help: 'Events held by a lane (queued and in flight to storage).',
      labelNames: ['lane'] as const,
      registers: r,
      collect() {
        for (const hook of collectHooks) hook();
      },
    }),
    laneBytes: new Gauge({
      name: 'sluice_lane_depth_bytes',
      help: 'Estimated bytes held by a lane.',
      labelNames: ['lane'] as const,
      registers: r,
    }),
    laneCapacity: new Gauge({
      name: 'sluice_lane_capacity_events',
      help: 'Event capacity of a lane.',
      labelNames: ['lane'] as const,
      registers: r,
    }),
    laneCapacityBytes: new Gauge({
      name: 'sluice_lane_capacity_bytes',
      help: 'Byte capacity of a lane.',
      labelNames: ['lane'] as const,
      registers: r,
    }),
    batchSize: new Histogram({
      name: 'sluice_batch_size_events',
      help: 'Events per storage write.',
      buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000, 10000],
      registers: r,
    }),
    flushDuration: new Histogram({
      name: 'sluice_flush_duration_seconds',
      help: 'Duration of one successful storage write (one transaction).',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: r,
    }),
    writeErrors: new Counter({
      name: 'sluice_write_errors_total',
      help: 'Failed storage writes, by kind (transient: retried; permanent: batch split to isolate the bad row).',
      labelNames: ['kind'] as const,
      registers: r,
    }),
    writeRedos: new Counter({
      name: 'sluice_write_duplicate_redos_total',
      help: 'Batches whose fast COPY met an (id, ts) already stored and were written again through the deduplicating path.',
      registers: r,
    }),
    writeRetries: new Counter({
      name: 'sluice_write_retries_total',
      help: 'Storage writes retried after a transient failure.',
      registers: r,
    }),
    storageUp: new Gauge({
      name: 'sluice_storage_up',
      help: '1 when the last background storage check succeeded.',
      registers: r,
    }),
    draining: new Gauge({
      name: 'sluice_draining',
      help: '1 while the collector is shutting down.',
      registers: r,
    }),
    httpDuration: new Histogram({
      name: 'sluice_http_request_duration_seconds',
      help: 'HTTP request duration by route template, method and status.',
      labelNames: ['route', 'method', 'status'] as const,
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: r,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
