import { storableText } from '../events/cut-text';
import type { EventLimits } from '../events/limits';
import type { ErrorDetail } from '../events/types';

/**
 * The `error` of an event from OpenTelemetry's exception conventions (`exception.message`,
 * `exception.type`, `exception.stacktrace`, '' when absent), each within its limit: message as a
 * string, kind as a source field, stack as a stack.
 */
export function exceptionDetail(
  message: string,
  kind: string,
  stack: string,
  limits: Pick<EventLimits, 'maxStringLength' | 'maxSourceLength' | 'maxStackLength'>,
): ErrorDetail {
  return {
    message: storableText(message, limits.maxStringLength),
    kind: kind ? storableText(kind, limits.maxSourceLength) : null,
    stack: stack ? storableText(stack, limits.maxStackLength) : null,
  };
}
