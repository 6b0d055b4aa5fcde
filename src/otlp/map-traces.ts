import { AttributeBag, findText } from './attributes';
import { deterministicId } from './event-id';
import { exceptionDetail } from './exception-detail';
import { ExportBuilder, newEvent } from './mapped-export';
import type { EventParts, MappedExport, MappingContext } from './mapped-export';
import { STATUS_CODE_ERROR, type OtlpSpan, type OtlpSpanEvent } from './model';
import { sluiceName } from './names';
import { mapResource } from './resource';
import { idHex, int32, list, nanosToMs, record, text } from './scalars';

const isException = (key: string): boolean => key.startsWith('exception.');

/**
 * `ExportTraceServiceRequest` → error events. A span becomes an event only when it failed: its
 * status is ERROR, or it recorded an `exception` event. The error event is named by the span's
 * name (rule in names.ts) and takes message, kind and stack from the first exception event's
 * `exception.message` / `exception.type` / `exception.stacktrace` (else the status message, else
 * the span name); attributes `trace_id`, `span_id`, `otel.span_kind`, `duration_ms`, then the
 * exception event's other attributes, then the span's; ts is the exception's time (else the
 * span's end). Its id derives from the trace and span ids, so a resent span is stored once.
 *
 * Every other span is counted (`skipped`) and not stored: Sluice keeps events, not traces; a
 * span per operation would multiply the volume by the spans per request and spend the app's
 * rate-limit budget on records no Sluice query reads. Latency belongs in the metrics signal
 * (`http.server.duration` arrives as a histogram summary).
 */
export function mapTraces(request: unknown, ctx: MappingContext): MappedExport {
  const out = new ExportBuilder(ctx);
  const { limits } = ctx;
  for (const rs of list<unknown>(record<{ resourceSpans?: unknown }>(request)?.resourceSpans)) {
    const resourceSpans = record<{ resource?: unknown; scopeSpans?: unknown }>(rs);
    const resource = mapResource(resourceSpans?.resource, ctx.keyApp, limits.maxSourceLength);
    for (const ss of list<unknown>(resourceSpans?.scopeSpans)) {
      for (const s of list<unknown>(record<{ spans?: unknown }>(ss)?.spans)) {
        out.records++;
        const span = record<OtlpSpan>(s);
        if (span === null) {
          out.unmappable('not_a_span');
          continue;
        }
        const status = record<NonNullable<OtlpSpan['status']>>(span.status);
        const exception = list<unknown>(span.events)
          .map((e) => record<OtlpSpanEvent>(e))
          .find((e) => e !== null && text(e.name) === 'exception');
        if (int32(status?.code) !== STATUS_CODE_ERROR && exception === undefined) {
          out.skipped++;
          continue;
        }
        const traceId = idHex(span.traceId);
        const spanId = idHex(span.spanId);
        if (!traceId || !spanId) {
          out.unmappable('span_id_missing');
          continue;
        }
        const mapped = errorParts(span, exception ?? null, traceId, spanId, ctx);
        out.droppedAttributes += mapped.dropped;
        const event = newEvent(resource.source, mapped.parts);
        event.id = deterministicId('span', traceId, spanId);
        out.add(event);
      }
    }
  }
  return out;
}

function errorParts(
  span: OtlpSpan,
  exception: OtlpSpanEvent | null,
  traceId: string,
  spanId: string,
  ctx: MappingContext,
): { parts: EventParts; dropped: number } {
  const { limits } = ctx;
  const name = sluiceName(text(span.name), limits.maxNameLength, 'otel.span');
  const startMs = nanosToMs(span.startTimeUnixNano);
  const endMs = nanosToMs(span.endTimeUnixNano);
  const ts = (exception ? nanosToMs(exception.timeUnixNano) : 0) || endMs || startMs || ctx.now;
  const bag = new AttributeBag({
    maxAttributes: limits.maxAttributes,
    maxKeyLength: limits.maxAttributeKeyLength,
    maxStringLength: limits.maxStringLength,
  });
  bag.set('trace_id', traceId);
  bag.set('span_id', spanId);
  bag.set('otel.span_kind', int32(span.kind));
  if (startMs > 0 && endMs >= startMs) bag.set('duration_ms', endMs - startMs);
  if (exception) bag.addKeyValues(exception.attributes, isException);
  bag.addKeyValues(span.attributes, isException);

  const attrs = exception?.attributes;
  const message =
    findText(attrs, 'exception.message') || text(record<{ message?: unknown }>(span.status)?.message) || name;
  const error = exceptionDetail(
    message,
    findText(attrs, 'exception.type'),
    findText(attrs, 'exception.stacktrace'),
    limits,
  );
  return { parts: { type: 'error', name, ts, error, attributes: bag.toObject() }, dropped: bag.dropped };
}
