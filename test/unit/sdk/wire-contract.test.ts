/**
 * The SDK package stands alone, so it declares the wire contract's primitives and the collector's
 * default limits itself. These checks keep its copies equal to the collector's.
 */
import { eventLimits } from '../../../src/compose/storage';
import { loadConfig } from '../../../src/config/load';
import { METRIC_VALUE_BOUND } from '../../../src/events/metric-bound';
import * as collector from '../../../src/events/types';
import { validateEvent } from '../../../src/events/validate';
import { CAPTURE_LIMITS, isValidName } from '../../../sdk/src/limits';
import * as sdk from '../../../sdk/src/types';

/** `true` only when A and B are the same type. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameTypes: [
  Same<sdk.EventType, collector.EventType>,
  Same<sdk.AttributeValue, collector.AttributeValue>,
  Same<sdk.Attributes, collector.Attributes>,
  Same<sdk.MetricSummary, collector.MetricSummary>,
] = [true, true, true, true];

const limits = eventLimits(loadConfig({}));

describe("the SDK's copy of the wire contract", () => {
  it("has the collector's event types, in the same priority order", () => {
    expect(sameTypes).toEqual([true, true, true, true]);
    expect(sdk.EVENT_TYPES).toEqual(collector.EVENT_TYPES);
  });

  it("cuts at the collector's default limits", () => {
    expect(CAPTURE_LIMITS).toMatchObject({
      maxAttributes: limits.maxAttributes,
      maxAttributeKeyLength: limits.maxAttributeKeyLength,
      maxStringLength: limits.maxStringLength,
      maxStackLength: limits.maxStackLength,
      maxNameLength: limits.maxNameLength,
      maxKindLength: limits.maxSourceLength,
      maxMetricMagnitude: METRIC_VALUE_BOUND,
    });
  });

  it('refuses at capture exactly the names the collector rejects', () => {
    const names = [
      'a',
      'a.b',
      'render.frame_drop',
      'a-b_c.D9',
      '',
      '.a',
      'a.',
      'a..b',
      'a b',
      'ä',
      'a/b',
      'x'.repeat(128),
      'x'.repeat(129),
    ];
    const now = Date.UTC(2025, 5, 1);
    for (const name of names) {
      const event = {
        id: '0190f3c2-0000-7000-8000-000000000000',
        type: 'log',
        name,
        ts: now,
        source: { app: 'a' },
      };
      expect([name, isValidName(name)]).toEqual([name, validateEvent(event, limits, now).ok]);
    }
  });
});
