/**
 * Baseline (d′), the floor of the collector's own design: baseline (d) with the collector's single
 * pass (`RequestScan` and `copyLineFromScan`, src/events/scan/ and src/storage/postgres/) in place
 * of `JSON.parse` and string building. A bare `node:http` server (`floor-server.ts`) that scans and
 * validates each `POST /v1/events` body into COPY lines straight from its bytes and COPYs them
 * into the Sluice schema. No lanes, rate limit, dedupe, loss map, metrics or backpressure, no ts
 * order, and a body with an event the pass leaves to the typed path is refused: what it costs per
 * event is the least a collector built on the single pass can spend.
 */
import { eventLimits } from '../../../src/compose/storage';
import { loadConfig } from '../../../src/config/load';
import { RequestScan, type ScanHandlers } from '../../../src/events/scan/scan-request';
import { columnList, EVENTS } from '../../../src/storage/layout/columns';
import { copyLineFromScan } from '../../../src/storage/postgres/copy-line-from-scan';
import { serveFloor, type FloorRequest } from './floor-server';

const MAX_EVENTS = 1000;
const LIMITS = eventLimits(loadConfig({}));
const EVENTS_SQL = `COPY ${EVENTS.table} (${columnList(EVENTS)}) FROM STDIN`;

/** The lines of the request being scanned: views into the pass's shared slabs. */
let metrics: Buffer[] = [];
let others: Buffer[] = [];
let slow = 0;

const handlers: ScanHandlers = {
  fast(fields, _index, scan) {
    const line = copyLineFromScan(scan.text, fields);
    (line.metric ? metrics : others).push(line.bytes);
  },
  slow() {
    slow++;
  },
};

/** The request's lines, one buffer per table; null when the pass does not read all of it. */
function encode(body: Buffer): FloorRequest | null {
  metrics = [];
  others = [];
  slow = 0;
  const scan = RequestScan.open(body, LIMITS, Date.now(), MAX_EVENTS, () => undefined);
  if (scan === null || scan.step(Number.MAX_SAFE_INTEGER, handlers) === 'fallback' || slow > 0) return null;
  return {
    events: scan.count,
    metrics: metrics.length === 0 ? null : metrics,
    others: others.length === 0 ? null : Buffer.concat(others),
  };
}

serveFloor(encode, EVENTS_SQL);
