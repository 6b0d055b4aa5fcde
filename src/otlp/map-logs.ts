import { storableText } from '../events/cut-text';
import { AttributeBag, findText } from './attributes';
import { valueText } from './any-value';
import { deterministicId } from './event-id';
import { exceptionDetail } from './exception-detail';
import {
  ExportBuilder,
  newEvent,
  type EventParts,
  type MappedExport,
  type MappingContext,
} from './mapped-export';
import { SEVERITY_ERROR, type OtlpLogRecord } from './model';
import { sluiceName } from './names';
import { mapResource, mapScope } from './resource';
import { idHex, int32, int64Text, list, nanosToMs, record, text } from './scalars';

/** Severity names of `SeverityNumber` ranges (1–4 TRACE … 21–24 FATAL). */
const SEVERITY_NAMES = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'] as const;

const isException = (key: string): boolean => key.startsWith('exception.');

/**
 * `ExportLogsServiceRequest` → events. Each log record becomes one event named by its
 * `event_name`, else its scope's name, else `otel.log`, with the rule in names.ts:
 * - an `error` event when its severity is ERROR or above, or when it carries `exception.*`
 *   attributes: message from `exception.message` (else the body), kind from `exception.type`,
 *   stack from `exception.stacktrace`;
 * - a `log` event otherwise, its body as the message (non-string bodies as JSON text).
 * Attributes: `log.severity`, `trace_id`, `span_id` (when set), then the record's own.
 * ts: the record's time, else its observed time, else now.
 */
export function mapLogs(request: unknown, ctx: MappingContext): MappedExport {
  const out = new ExportBuilder(ctx);
  const { limits } = ctx;
  for (const rl of list<unknown>(record<{ resourceLogs?: unknown }>(request)?.resourceLogs)) {
    const resourceLogs = record<{ resource?: unknown; scopeLogs?: unknown }>(rl);
    const resource = mapResource(resourceLogs?.resource, ctx.keyApp, limits.maxSourceLength);
    for (const sl of list<unknown>(resourceLogs?.scopeLogs)) {
      const scopeLogs = record<{ scope?: unknown; logRecords?: unknown }>(sl);
      const scope = mapScope(scopeLogs?.scope);
      const scopeName = sluiceName(scope.name, limits.maxNameLength, 'otel.log');
      for (const lr of list<unknown>(scopeLogs?.logRecords)) {
        out.records++;
        const log = record<OtlpLogRecord>(lr);
        if (log === null) {
          out.unmappable('not_a_record');
          continue;
        }
        const mapped = mapLogRecord(log, scopeName, ctx);
        out.droppedAttributes += mapped.dropped;
        const event = newEvent(resource.source, mapped.parts);
        event.id = deterministicId(
          'log',
          resource.key,
          scope.key,
          int64Text(log.timeUnixNano),
          int64Text(log.observedTimeUnixNano),
          JSON.stringify(event),
        );
        out.add(event);
      }
    }
  }
  return out;
}

function mapLogRecord(
  log: OtlpLogRecord,
  scopeName: string,
  ctx: MappingContext,
): { parts: EventParts; dropped: number } {
  const { limits } = ctx;
  const severity = int32(log.severityNumber);
  const eventName = text(log.eventName);
  const name = eventName ? sluiceName(eventName, limits.maxNameLength, scopeName) : scopeName;
  const ts = nanosToMs(log.timeUnixNano) || nanosToMs(log.observedTimeUnixNano) || ctx.now;
  const body = valueText(log.body);
  const exceptionType = findText(log.attributes, 'exception.type');
  const exceptionMessage = findText(log.attributes, 'exception.message');
  const exceptionStack = findText(log.attributes, 'exception.stacktrace');
  const isError = severity >= SEVERITY_ERROR || Boolean(exceptionType || exceptionMessage || exceptionStack);

  const bag = new AttributeBag({
    maxAttributes: limits.maxAttributes,
    maxKeyLength: limits.maxAttributeKeyLength,
    maxStringLength: limits.maxStringLength,
  });
  const severityName = text(log.severityText) || severityNameOf(severity);
  if (severityName) bag.set('log.severity', severityName);
  const traceId = idHex(log.traceId);
  const spanId = idHex(log.spanId);
  if (traceId) bag.set('trace_id', traceId);
  if (spanId) bag.set('span_id', spanId);
  bag.addKeyValues(log.attributes, isError ? isException : undefined);

  const attributes = bag.toObject();
  const bounded = (s: string) => storableText(s, limits.maxStringLength);
  if (!isError) {
    const message = body ? bounded(body) : undefined;
    return { parts: { type: 'log', name, ts, message, attributes }, dropped: bag.dropped };
  }
  const error = exceptionDetail(exceptionMessage || body || name, exceptionType, exceptionStack, limits);
  // The body is kept as the message when it says something besides the exception's message.
  const message = body && exceptionMessage && body !== exceptionMessage ? bounded(body) : undefined;
  return { parts: { type: 'error', name, ts, error, message, attributes }, dropped: bag.dropped };
}

function severityNameOf(n: number): string {
  return n >= 1 && n <= 24 ? (SEVERITY_NAMES[Math.floor((n - 1) / 4)] ?? '') : '';
}
