/**
 * `@sluice/sdk`: captures errors, lifecycle events, metrics and logs, and
 * sends them politely to a Sluice collector. Runs in browsers and Node (the
 * package's `engines`); Node extras (file persistence, exit hooks) are in
 * `@sluice/sdk/node`.
 */
export { createClient, type CaptureAttributes, type Client } from './client';
export type {
  AggregatedMetrics,
  AggregationOptions,
  BufferOptions,
  ClientOptions,
  RetryOptions,
} from './options';
export type { ClientStats, DropReason } from './stats';
export { SDK_ERROR_CODES, SluiceSdkError, type RejectedEvent, type SdkErrorCode } from './sdk-error';
export type {
  Attributes,
  AttributeValue,
  EventType,
  MetricSummary,
  Source,
  WireError,
  WireEvent,
} from './types';
export { fetchTransport, type Transport, type TransportRequest, type TransportResponse } from './transport';
export { parseSavedEvents, type BufferStore } from './store';
export { localStorageStore } from './local-storage-store';
export { systemClock, type Clock, type TimerHandle, type TimerOptions } from './clock';
