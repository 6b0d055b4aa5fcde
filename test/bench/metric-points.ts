import { EventGenerator, type RequestBody, type WireEvent } from './workload';

/** Points a request, every server alike (the issue's load shape). */
export const POINTS_PER_REQUEST = 100;

/**
 * A request body that can be made new points in place: the byte offsets of the part of each point
 * that makes it unique (a timestamp's milliseconds, an id's last four hex digits) and the cycle the
 * body holds now.
 */
interface RecyclableBody extends RequestBody {
  readonly slots: Int32Array;
  /** Line protocol: each point's milliseconds at cycle 0. */
  readonly baseMs: Float64Array;
  cycle: number;
}

/**
 * The same metric points as JSON `POST /v1/events` bodies for Sluice and as line protocol for
 * InfluxDB and VictoriaMetrics, each with every attribute (`json`, `lines`) or with the value and
 * the tags alone (`valueJson`, `valueLines`). Each set is sent round and round by the closed loop, made new points each cycle
 * by its `recycle*` function, so a window never runs out of bodies.
 */
export interface MetricPoints {
  readonly json: RequestBody[];
  readonly lines: RequestBody[];
  /** The same points as JSON with the region as their only attribute: `valueLines` for Sluice. */
  readonly valueJson: RequestBody[];
  readonly valueLines: RequestBody[];
  /** Bytes a point of each set (body bytes ÷ points). */
  readonly bytesPerPoint: {
    readonly json: number;
    readonly lines: number;
    readonly valueJson: number;
    readonly valueLines: number;
  };
}

/** Line protocol escapes of a measurement, tag key or tag value (commas, spaces, equals signs). */
function tag(s: string): string {
  return s.replace(/[,= ]/g, (c) => `\\${c}`);
}

/** A string field's value: quoted, with `"` and `\` escaped. */
function stringField(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/** Attributes written as tags, with app, env and version: bounded sets, as an InfluxDB schema keeps its tags. */
const TAG_ATTRIBUTES = new Set(['region']);

/**
 * One point up to its timestamp: the metric name as measurement; app, env, version and the region
 * as tags, sorted by key (144 series per name, as a metrics user keys them); the value and, unless
 * `valueOnly`, the other attributes (route, method, host, status) as fields. With every string
 * attribute a tag, nearly each point would create a series of its own: InfluxDB's index would be
 * measured, not its write path.
 */
function lineHead(e: WireEvent, valueOnly: boolean): string {
  const tags: string[] = [`app=${tag(e.source.app)}`, `env=${tag(e.source.env)}`];
  const fields = [`value=${e.value ?? 0}`];
  for (const [k, v] of Object.entries(e.attributes).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (typeof v === 'string' && TAG_ATTRIBUTES.has(k)) tags.push(`${tag(k)}=${tag(v)}`);
    else if (valueOnly) continue;
    else if (typeof v === 'string') fields.push(`${tag(k)}=${stringField(v)}`);
    else if (typeof v === 'number') fields.push(`${tag(k)}=${v}`);
  }
  tags.push(`version=${tag(e.source.version)}`);
  return `${tag(e.name)},${tags.join(',')} ${fields.join(',')} `;
}

/**
 * Line protocol of `events`; each timestamp in nanoseconds is the event's 13-digit milliseconds
 * and 6 digits unique per point of the set (`unique`), so no two points of a series share a time
 * (InfluxDB would overwrite one with the other, where Sluice stores both).
 */
function lineBody(events: readonly WireEvent[], firstUnique: number, valueOnly: boolean): RecyclableBody {
  const slots = new Int32Array(events.length);
  const baseMs = new Float64Array(events.length);
  let text = '';
  events.forEach((e, i) => {
    const head = lineHead(e, valueOnly);
    slots[i] = Buffer.byteLength(text) + Buffer.byteLength(head);
    baseMs[i] = e.ts;
    text += `${head}${e.ts}${String((firstUnique + i) % 1_000_000).padStart(6, '0')}\n`;
  });
  return { bytes: Buffer.from(text), events: events.length, slots, baseMs, cycle: 0 };
}

/**
 * JSON body of `events` with each id's last four hex digits set to `0000` (the cycle), so that the
 * ids of one cycle differ from every other cycle's in those digits and from each other in the rest.
 */
function jsonBody(events: readonly WireEvent[]): RecyclableBody {
  const renamed = events.map((e) => ({ ...e, id: `${e.id.slice(0, -4)}0000` }));
  const bytes = Buffer.from(JSON.stringify({ events: renamed }));
  const slots = new Int32Array(events.length);
  let from = 0;
  renamed.forEach((e, i) => {
    const at = bytes.indexOf(`"${e.id}"`, from, 'latin1');
    if (at < 0) throw new Error('metric points: id not found in its body');
    slots[i] = at + 1 + e.id.length - 4;
    from = at + 1;
  });
  return { bytes, events: events.length, slots, baseMs: new Float64Array(0), cycle: 0 };
}

/** `points` metric points (a multiple of 100), the same in each set; deterministic for a seed. */
export function metricPoints(points: number, seed: number): MetricPoints {
  const generator = new EventGenerator(seed);
  const now = Date.now();
  const json: RequestBody[] = [];
  const lines: RequestBody[] = [];
  const valueJson: RequestBody[] = [];
  const valueLines: RequestBody[] = [];
  for (let n = 0; n < points; n += POINTS_PER_REQUEST) {
    const events: WireEvent[] = [];
    while (events.length < POINTS_PER_REQUEST) {
      const e = generator.next(now);
      if (e.type === 'metric') events.push(e);
    }
    json.push(jsonBody(events));
    valueJson.push(
      jsonBody(events.map((e) => ({ ...e, attributes: { region: e.attributes.region ?? '' } }))),
    );
    lines.push(lineBody(events, n, false));
    valueLines.push(lineBody(events, n, true));
  }
  const per = (set: readonly RequestBody[]): number =>
    set.reduce((sum, b) => sum + b.bytes.length, 0) / Math.max(1, set.length * POINTS_PER_REQUEST);
  return {
    json,
    lines,
    valueJson,
    valueLines,
    bytesPerPoint: {
      json: per(json),
      lines: per(lines),
      valueJson: per(valueJson),
      valueLines: per(valueLines),
    },
  };
}

/** Writes `value` as `width` ASCII digits of `radix` at `at` (leading zeros). */
function writeDigits(bytes: Buffer, at: number, width: number, value: number, radix: number): void {
  let v = value;
  for (let k = width - 1; k >= 0; k--) {
    const d = v % radix;
    bytes[at + k] = d < 10 ? 48 + d : 87 + d;
    v = Math.floor(v / radix);
  }
}

/**
 * `ClosedLoopOptions.recycle` of line protocol bodies: cycle c moves every point `c` milliseconds
 * later, so each cycle's points are new points of the same series (a point keeps its 6 unique
 * digits, and two cycles never share a millisecond for it).
 */
export function recycleLines(body: RequestBody, cycle: number): void {
  const b = body as RecyclableBody;
  if (b.cycle === cycle) return;
  for (let i = 0; i < b.slots.length; i++) {
    writeDigits(b.bytes, b.slots[i] as number, 13, (b.baseMs[i] as number) + cycle, 10);
  }
  b.cycle = cycle;
}

/** `ClosedLoopOptions.recycle` of JSON bodies: cycle c writes `c` (hex) as each id's last four digits. */
export function recycleJson(body: RequestBody, cycle: number): void {
  const b = body as RecyclableBody;
  if (b.cycle === cycle) return;
  if (cycle >= 0x10000) throw new Error('metric points: more than 65,536 cycles of one body set');
  for (let i = 0; i < b.slots.length; i++) writeDigits(b.bytes, b.slots[i] as number, 4, cycle, 16);
  b.cycle = cycle;
}
