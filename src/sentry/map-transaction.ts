import { storableText } from '../events/cut-text';
import { isTsInWindow } from '../events/ts-window';
import type { TelemetryEvent } from '../events/types';
import { AttributeBag } from '../otlp/attributes';
import { deterministicId } from '../otlp/event-id';
import { list, record } from '../otlp/scalars';
import { eventIdOf, setText, text, tsOf, type SentryMappingContext } from './map-event';
import type { SentrySpan, SentryStreamedSpan, SentryTransaction } from './model';

/** The metric a transaction (or a streamed segment span) becomes: its duration (milliseconds). */
export const TRANSACTION_DURATION = 'sentry.transaction.duration';
/** The metric any other span becomes: its duration (milliseconds). */
export const SPAN_DURATION = 'sentry.span.duration';

/** Why a transaction or span could not be a sample: counted lost at the collector. */
export type UnmappedReason = 'not_an_event' | 'ts_out_of_range';

/** One item's duration samples, and the reason of each transaction or span that could not be one. */
export interface MappedSentryDurations {
  readonly events: TelemetryEvent[];
  readonly unmapped: UnmappedReason[];
  readonly droppedAttributes: number;
}

/** One duration to store, read from whichever shape the SDK sent. */
interface Duration {
  readonly id: string;
  readonly name: typeof TRANSACTION_DURATION | typeof SPAN_DURATION;
  /** Epoch milliseconds; null when absent or unreadable. */
  readonly start: number | null;
  readonly end: number | null;
  readonly release: unknown;
  readonly environment: unknown;
  /** The transaction (segment) it belongs to, or is. */
  readonly transaction: unknown;
  /** A span's own name (`description`); none for a transaction. */
  readonly span: unknown;
  readonly op: unknown;
  readonly status: unknown;
  readonly traceId: unknown;
}

/**
 * A `transaction` item (`traceLifecycle: 'static'`, and every SDK before span streaming) → one
 * sample `sentry.transaction.duration`, `timestamp - start_timestamp` in milliseconds at
 * `timestamp` (its end), id its `event_id` (a resent transaction is stored once); each of its
 * `spans` → one sample `sentry.span.duration`.
 */
export function mapSentryTransaction(payload: unknown, ctx: SentryMappingContext): MappedSentryDurations {
  const out = new Samples(ctx);
  const t = record<SentryTransaction>(payload);
  if (t === null) return out.lost('not_an_event');
  const trace = record<SentrySpan>(record<{ trace?: unknown }>(t.contexts)?.trace);
  out.add({
    id: eventIdOf(t.event_id, payload),
    name: TRANSACTION_DURATION,
    start: tsOf(t.start_timestamp),
    end: tsOf(t.timestamp),
    release: t.release,
    environment: t.environment,
    transaction: t.transaction,
    span: null,
    op: trace?.op,
    status: trace?.status,
    traceId: trace?.trace_id,
  });
  for (const raw of list<unknown>(t.spans)) {
    out.add(spanDuration(record<SentrySpan>(raw), ctx, t.transaction, t.release, t.environment));
  }
  return out.done();
}

/**
 * A `span` item → one sample per span: `{version: 2, items: [...]}` of span streaming (the
 * default of @sentry/node 10 and later: `end_timestamp`, `{value, type}` attributes), where the
 * segment span (`is_segment`) is the transaction and becomes `sentry.transaction.duration`; or one
 * standalone span object (`timestamp`, `data`), `sentry.span.duration`. A span's id is digested
 * from the app, `trace_id` and `span_id`, so a resent span is stored once.
 */
export function mapSentrySpans(payload: unknown, ctx: SentryMappingContext): MappedSentryDurations {
  const out = new Samples(ctx);
  const p = record<{ items?: unknown }>(payload);
  if (p === null) return out.lost('not_an_event');
  if (!Array.isArray(p.items)) {
    const span = record<SentrySpan>(p);
    const data = record<Record<string, unknown>>(span?.data);
    out.add(
      spanDuration(
        span,
        ctx,
        data?.['sentry.segment.name'],
        data?.['sentry.release'],
        data?.['sentry.environment'],
      ),
    );
    return out.done();
  }
  for (const raw of p.items) {
    const s = record<SentryStreamedSpan>(raw);
    if (s === null || !text(s.span_id)) {
      out.lost('not_an_event');
      continue;
    }
    const attributes = record<Record<string, unknown>>(s.attributes);
    const attribute = (key: string): unknown => record<{ value?: unknown }>(attributes?.[key])?.value;
    const segment = s.is_segment === true;
    out.add({
      id: deterministicId('sentry.span', ctx.app, text(s.trace_id), text(s.span_id)),
      name: segment ? TRANSACTION_DURATION : SPAN_DURATION,
      start: tsOf(s.start_timestamp),
      end: tsOf(s.end_timestamp),
      release: attribute('sentry.release'),
      environment: attribute('sentry.environment'),
      transaction: segment ? s.name : attribute('sentry.segment.name'),
      span: segment ? null : s.name,
      op: attribute('sentry.op'),
      status: s.status,
      traceId: s.trace_id,
    });
  }
  return out.done();
}

/** A span object (a transaction's `spans`, or a standalone one) as a `sentry.span.duration`; null when it has no `span_id`. */
function spanDuration(
  s: SentrySpan | null,
  ctx: SentryMappingContext,
  transaction: unknown,
  release: unknown,
  environment: unknown,
): Duration | null {
  if (s === null || !text(s.span_id)) return null;
  return {
    id: deterministicId('sentry.span', ctx.app, text(s.trace_id), text(s.span_id)),
    name: SPAN_DURATION,
    start: tsOf(s.start_timestamp),
    end: tsOf(s.timestamp),
    release,
    environment,
    transaction,
    span: s.description,
    op: s.op,
    status: s.status,
    traceId: s.trace_id,
  };
}

/**
 * The samples of one item, built within the intake's limits: attributes `transaction`, `span`,
 * `op`, `status`, `trace_id`; `release` → version, `environment` → env.
 */
class Samples {
  private readonly events: TelemetryEvent[] = [];
  private readonly unmapped: UnmappedReason[] = [];
  private droppedAttributes = 0;

  constructor(private readonly ctx: SentryMappingContext) {}

  lost(reason: UnmappedReason): MappedSentryDurations {
    this.unmapped.push(reason);
    return this.done();
  }

  add(d: Duration | null): void {
    const { limits } = this.ctx;
    // A duration needs both ends, in order: without them there is no value to store.
    if (d === null || d.start === null || d.end === null || d.end < d.start) {
      this.unmapped.push('not_an_event');
      return;
    }
    if (!isTsInWindow(d.end, this.ctx.now, limits)) {
      this.unmapped.push('ts_out_of_range');
      return;
    }
    const bag = new AttributeBag({
      maxAttributes: limits.maxAttributes,
      maxKeyLength: limits.maxAttributeKeyLength,
      maxStringLength: limits.maxStringLength,
    });
    setText(bag, 'transaction', d.transaction);
    setText(bag, 'span', d.span);
    setText(bag, 'op', d.op);
    setText(bag, 'status', d.status);
    setText(bag, 'trace_id', d.traceId);
    this.droppedAttributes += bag.dropped;
    const source = (v: unknown): string | null =>
      text(v) ? storableText(text(v), limits.maxSourceLength) : null;
    this.events.push({
      id: d.id,
      type: 'metric',
      name: d.name,
      ts: d.end,
      app: this.ctx.app,
      version: source(d.release),
      env: source(d.environment),
      value: d.end - d.start,
      summary: null,
      error: null,
      message: null,
      attributes: bag.toObject(),
    });
  }

  done(): MappedSentryDurations {
    return { events: this.events, unmapped: this.unmapped, droppedAttributes: this.droppedAttributes };
  }
}
