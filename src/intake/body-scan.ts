import type { EventLimits } from '../events/limits';
import { RequestScan, type ScanHandlers } from '../events/scan/scan-request';
import type { ScannedEvent } from '../events/scan/scanned-event';
import type { Candidate } from './intake-decision';
import { SlowEvent, scannedEvents, type RequestEvents } from './request-events';

/**
 * Events scanned between two turns of a large body: about half a millisecond of work on the bench
 * box, within the turn budget, so a request of the usual 100 events is one turn.
 */
const SCAN_SLICE_EVENTS = 128;

/** A `POST /v1/events` body read by the single pass. */
export interface ScannedBody<Row> {
  readonly events: RequestEvents<Row>;
  /** The body's client report as the scan delimited it (after the events array), or null. */
  readonly report: string | null;
}

/** How one body is scanned. */
export interface BodyScanOptions<Row> {
  readonly limits: EventLimits;
  readonly maxEventsPerRequest: number;
  /** Writes an event the pass validated as what the sink holds (see `IntakeServiceOptions.rowFromScan`). */
  readonly rowFromScan: (body: Uint8Array, event: ScannedEvent) => Row;
  /** Awaited between slices of a large body, so that the loop polls its sockets in between. */
  readonly nextSlice: () => Promise<void>;
  /** The body's shape check, called before the pass skips nested values or parses anything; throws to refuse it. */
  readonly checkShape: () => void;
}

/**
 * Reads a body in one pass (events/scan/): each event the pass reads through goes from the body's bytes to
 * its row with no `JSON.parse` and no typed event; the others are left to be validated as the typed
 * path does. Null when the body is not of the shape the pass reads: the caller parses it.
 */
export async function scanBody<Row>(
  body: Buffer,
  now: number,
  o: BodyScanOptions<Row>,
): Promise<ScannedBody<Row> | null> {
  const scan = RequestScan.open(body, o.limits, now, o.maxEventsPerRequest, o.checkShape);
  if (scan === null) return null;
  const { rowFromScan } = o;
  const entries: Array<Candidate<Row> | SlowEvent> = [];
  const handlers: ScanHandlers = {
    fast: (f, index) => {
      entries.push({
        type: f.type,
        app: scan.textOf(f.app, true),
        id: scan.idOf(f),
        ts: f.ts,
        bytes: f.bytes,
        event: null,
        row: rowFromScan(body, f),
        index,
      });
    },
    slow: (raw) => entries.push(new SlowEvent(raw)),
  };
  for (;;) {
    const step = scan.step(SCAN_SLICE_EVENTS, handlers);
    if (step === 'fallback') return null;
    if (step === 'done') break;
    await o.nextSlice();
  }
  return { events: scannedEvents(entries, o.limits), report: scan.reportText() };
}
