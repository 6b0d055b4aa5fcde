import { SluiceError } from '../../errors/catalogue';
import type { OtlpEncoding } from '../../otlp/encoding';
import type { OtlpTypes } from '../../otlp/proto/otlp-types';
import type { SignalSpec } from '../../otlp/signals';
import { scanJson } from '../json-scan';

/**
 * Decodes an export request body (see src/otlp/model.ts for the shape both encodings share).
 * JSON: parsed, refused when nested deeper than `maxJsonDepth`, required to be an object; unknown
 * fields are ignored. Protobuf: decoded by protobufjs, which skips unknown fields and refuses
 * nesting beyond its recursion limit (100). Throws a `SluiceError` (400).
 */
export function decodeExport(
  body: Buffer,
  encoding: OtlpEncoding,
  spec: SignalSpec,
  types: OtlpTypes,
  maxJsonDepth: number,
): unknown {
  const type = spec.request(types);
  if (encoding === 'protobuf') {
    try {
      return type.decode(body);
    } catch (err) {
      throw new SluiceError(
        'invalid_protobuf',
        `Body is not a valid protobuf ${type.name}: ${(err as Error).message}.`,
      );
    }
  }
  // Depth is checked on the raw bytes, before JSON.parse spends CPU on a hostile body; the count
  // of values is bounded by the body size limit alone (OTLP exports are larger than Sluice's).
  const shape = { maxDepth: maxJsonDepth, maxContainers: Infinity, maxSeparators: Infinity };
  if (scanJson(body, shape) === 'too_deep') {
    throw new SluiceError('too_deep', `Body nests deeper than ${maxJsonDepth} levels.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw new SluiceError('invalid_json');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new SluiceError('invalid_body', `Body must be a JSON object (an ${type.name}).`);
  }
  return parsed;
}
