import type { EventLimits } from './limits';
import { ERROR_MEMBERS, EVENT_MEMBERS, SOURCE_MEMBERS, SUMMARY_MEMBERS } from './wire-members';

/** Objects one event of the contract can hold: the event, `source`, `attributes`, `error` or `summary`. */
const CONTAINERS_PER_EVENT = 4;
/** Members one event of the contract can hold besides its attributes (21 today). */
const MEMBERS_PER_EVENT =
  EVENT_MEMBERS.length + SOURCE_MEMBERS.length + SUMMARY_MEMBERS.length + ERROR_MEMBERS.length;
/** Room for fields this version does not know (they are ignored, not refused). */
const SLACK = 2;
/** The envelope: `{"events": [ … ]}`. */
const ENVELOPE_CONTAINERS = 2;

/**
 * The most arrays/objects and `,`/`:` separators a body of `maxEvents` events of the wire contract
 * can need, twice over. A body beyond it cannot be a request this collector would take in full,
 * and parsing it could cost many times what a normal body of its size costs.
 */
export function wireShapeBudget(
  limits: Pick<EventLimits, 'maxAttributes'>,
  maxEvents: number,
): { maxContainers: number; maxSeparators: number } {
  return {
    maxContainers: SLACK * maxEvents * CONTAINERS_PER_EVENT + ENVELOPE_CONTAINERS,
    // Two separators per member (`:` and `,`), one `,` between events.
    maxSeparators: SLACK * maxEvents * (2 * (MEMBERS_PER_EVENT + limits.maxAttributes) + 1) + 1,
  };
}
