/**
 * Why one event of a request was not taken. Codes are stable: SDKs and
 * dashboards match on them. The message says what is allowed.
 */
export const REJECTION_REASONS = {
  not_an_object: 'event must be a JSON object',
  id_invalid: 'id must be a UUID string',
  type_invalid: 'type must be one of error, lifecycle, metric, log',
  name_invalid: 'name must be a dotted identifier (letters, digits, _ - between dots)',
  name_too_long: 'name is too long',
  ts_invalid: 'ts must be an integer number of milliseconds since the Unix epoch',
  ts_out_of_range: 'ts is older than the retention window or too far in the future',
  source_invalid: 'source must be an object with a non-empty string app',
  source_field_invalid: 'source.version and source.env must be strings within the length limit',
  value_invalid: 'a metric needs a finite number value or a summary',
  summary_invalid: 'summary must be {count, min, max, sum, avg} with count ≥ 1 and min ≤ max',
  error_invalid: 'an error event needs error: {message: string, kind?: string, stack?: string}',
  message_invalid: 'message must be a string within the length limit',
  attributes_invalid: 'attributes must be a flat object of string, number or boolean values',
  attributes_too_many: 'too many attributes',
  attribute_key_invalid: 'attribute key is empty, too long, or reserved (__proto__, constructor, prototype)',
  app_mismatch: 'source.app differs from the app this API key is bound to',
  attribute_value_invalid:
    'attribute value must be a string, a finite number or a boolean, within the length limit',
} as const;

export type RejectionReason = keyof typeof REJECTION_REASONS;

export interface Rejection {
  readonly reason: RejectionReason;
  /** The offending field, e.g. `attributes.route`. */
  readonly field?: string;
}
