import { EventGenerator, seededRandom, type RequestBody, type WireEvent } from './workload';

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
 * InfluxDB and VictoriaMetrics, in two schemas: tags only (`tagsJson`, `tagsLines`: one metric
 * name, three tags and the value, as a metrics user writes a point) and every attribute Sluice
 * stores (`json`, `lines`). Each set is sent round and round by the closed loop, made new points
 * each cycle by its `recycle*` function, so a window never runs out of bodies.
 */
export interface MetricPoints {
  readonly json: RequestBody[];
  readonly lines: RequestBody[];
  readonly tagsJson: RequestBody[];
  readonly tagsLines: RequestBody[];
  /** Bytes a point of each set (body bytes ÷ points). */
  readonly bytesPerPoint: {
    readonly json: number;
    readonly lines: number;
    readonly tagsJson: number;
    readonly tagsLines: number;
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
 * One point of the every-attribute schema up to its timestamp: the metric name as measurement;
 * app, env, version and the region as tags, sorted by key (144 series per name, as a metrics user
 * keys them); the value and the other attributes (route, method, host, status) as fields. With
 * every string attribute a tag, nearly each point would create a series of its own: InfluxDB's
 * index would be measured, not its write path.
 */
function everyAttributeHead(e: WireEvent): string {
  const tags: string[] = [`app=${tag(e.source.app)}`, `env=${tag(e.source.env)}`];
  const fields = [`value=${e.value ?? 0}`];
  for (const [k, v] of Object.entries(e.attributes).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (typeof v === 'string' && TAG_ATTRIBUTES.has(k)) tags.push(`${tag(k)}=${tag(v)}`);
    else if (typeof v === 'string') fields.push(`${tag(k)}=${stringField(v)}`);
    else if (typeof v === 'number') fields.push(`${tag(k)}=${v}`);
  }
  tags.push(`version=${tag(e.source.version)}`);
  return `${tag(e.name)},${tags.join(',')} ${fields.join(',')} `;
}

/** The one metric name of the tags-only schema. */
export const TAGS_ONLY_NAME = 'render_frame_drop';
const BROWSERS = ['chrome', 'firefox', 'safari', 'edge'];

/**
 * A point of the tags-only schema: `render_frame_drop` of an app, a route and a browser (6 × 6 × 4
 * = 144 series), its value; nothing else. For Sluice the app is the source's and route and
 * browser are attributes (no version, no env).
 */
interface TagsOnlyPoint {
  readonly id: string;
  readonly type: 'metric';
  readonly name: string;
  readonly ts: number;
  readonly source: { readonly app: string };
  readonly value: number;
  readonly attributes: { readonly route: string; readonly browser: string };
}

function tagsOnlyPoint(e: WireEvent, browser: string): TagsOnlyPoint {
  return {
    id: e.id,
    type: 'metric',
    name: TAGS_ONLY_NAME,
    ts: e.ts,
    source: { app: e.source.app },
    value: e.value ?? 0,
    attributes: { route: String(e.attributes.route), browser },
  };
}

/** A tags-only point up to its timestamp, tags sorted by key as InfluxDB advises. */
function tagsOnlyHead(p: TagsOnlyPoint): string {
  const a = p.attributes;
  return `${tag(p.name)},app=${tag(p.source.app)},browser=${tag(a.browser)},route=${tag(a.route)} value=${p.value} `;
}

/**
 * Line protocol of `points`, each up to its timestamp by `head`; each timestamp in nanoseconds is
 * the point's 13-digit milliseconds and 6 digits unique per point of the set (`unique`), so no two
 * points of a series share a time (InfluxDB would overwrite one with the other, where Sluice
 * stores both).
 */
function lineBody<P extends { readonly ts: number }>(
  points: readonly P[],
  firstUnique: number,
  head: (p: P) => string,
): RecyclableBody {
  const slots = new Int32Array(points.length);
  const baseMs = new Float64Array(points.length);
  let text = '';
  points.forEach((p, i) => {
    const h = head(p);
    slots[i] = Buffer.byteLength(text) + Buffer.byteLength(h);
    baseMs[i] = p.ts;
    text += `${h}${p.ts}${String((firstUnique + i) % 1_000_000).padStart(6, '0')}\n`;
  });
  return { bytes: Buffer.from(text), events: points.length, slots, baseMs, cycle: 0 };
}

/**
 * JSON body of `events` with each id's last four hex digits set to `0000` (the cycle), so that the
 * ids of one cycle differ from every other cycle's in those digits and from each other in the rest.
 */
function jsonBody(events: readonly { readonly id: string }[]): RecyclableBody {
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
  const browserOf = seededRandom(seed + 1);
  const now = Date.now();
  const json: RequestBody[] = [];
  const lines: RequestBody[] = [];
  const tagsJson: RequestBody[] = [];
  const tagsLines: RequestBody[] = [];
  for (let n = 0; n < points; n += POINTS_PER_REQUEST) {
    const events: WireEvent[] = [];
    while (events.length < POINTS_PER_REQUEST) {
      const e = generator.next(now);
      if (e.type === 'metric') events.push(e);
    }
    const tagged = events.map((e) =>
      tagsOnlyPoint(e, BROWSERS[Math.floor(browserOf() * BROWSERS.length)] as string),
    );
    json.push(jsonBody(events));
    lines.push(lineBody(events, n, everyAttributeHead));
    tagsJson.push(jsonBody(tagged));
    tagsLines.push(lineBody(tagged, n, tagsOnlyHead));
  }
  const per = (set: readonly RequestBody[]): number =>
    set.reduce((sum, b) => sum + b.bytes.length, 0) / Math.max(1, set.length * POINTS_PER_REQUEST);
  return {
    json,
    lines,
    tagsJson,
    tagsLines,
    bytesPerPoint: {
      json: per(json),
      lines: per(lines),
      tagsJson: per(tagsJson),
      tagsLines: per(tagsLines),
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
