/**
 * Why one event of a request was not taken. Codes are stable: SDKs and
 * dashboards match on them. The message says what is allowed.
 *
 * "Text" below means a string that can be stored exactly as sent: well-formed
 * Unicode (no lone surrogate) without U+0000. Nothing is replaced on the way in;
 * a string that is not text is refused with the reason of its field.
 */
export const REJECTION_REASONS = {
  not_an_object: 'event must be a JSON object',
  id_invalid: 'id must be a UUID string',
  type_invalid: 'type must be one of error, lifecycle, metric, log',
  name_invalid: 'name must be a dotted identifier (letters, digits, _ - between dots)',
  name_too_long: 'name is too long',
  ts_invalid: 'ts must be an integer number of milliseconds since the Unix epoch',
  ts_out_of_range: 'ts is older than the retention window or too far in the future',
  source_invalid: 'source must be an object whose app is non-empty text within the length limit',
  source_field_invalid: 'source.version and source.env must be text within the length limit',
  value_invalid: 'a metric needs a finite number value or a summary',
  value_out_of_range:
    'metric values (value, summary min and max) must lie within ±1e300, and a summary sum within ±count × 1e300, so that rollup sums stay finite',
  summary_invalid:
    'summary must be {count, min, max, sum, avg} of finite numbers, count an integer ≥ 1, min ≤ max and avg = sum / count',
  error_invalid: 'an error event needs error: {message, kind?, stack?}, each text within its length limit',
  message_invalid: 'message must be text (a string) within the length limit',
  attributes_invalid: 'attributes must be a flat object of string, number or boolean values',
  attributes_too_many: 'too many attributes',
  attribute_key_invalid:
    'attribute key is empty, too long, not text, or reserved (__proto__, constructor, prototype)',
  app_mismatch: 'source.app differs from the app this API key is bound to',
  attribute_value_invalid:
    'attribute value must be text within the length limit, a finite number or a boolean',
} as const;

export type RejectionReason = keyof typeof REJECTION_REASONS;

export interface Rejection {
  readonly reason: RejectionReason;
  /** The offending field, e.g. `attributes.route`; an attribute key is cut to 64 characters. */
  readonly field?: string;
}
