import { validateEvent } from '../../../src/events/validate';
import { metricPoints, recycleJson, recycleLines } from '../../bench/metric-points';
import type { RequestBody } from '../../bench/workload';
import { LIMITS } from '../otlp/fixtures';

interface JsonPoint {
  readonly id: string;
  readonly name: string;
  readonly ts: number;
  readonly source: Record<string, string>;
  readonly value: number;
  readonly attributes: Record<string, string>;
}

const jsonPoints = (body: RequestBody): JsonPoint[] =>
  (JSON.parse(body.bytes.toString('utf8')) as { events: JsonPoint[] }).events;

const lines = (body: RequestBody): string[] => body.bytes.toString('utf8').trimEnd().split('\n');

describe('metric points, tags only (one name, app/route/browser tags, the value)', () => {
  const points = metricPoints(1_000, 11);

  it('sends InfluxDB and Sluice the same points, one line per JSON event', () => {
    expect(points.tagsLines).toHaveLength(10);
    expect(points.tagsJson).toHaveLength(10);
    points.tagsLines.forEach((body, b) => {
      const json = jsonPoints(points.tagsJson[b] as RequestBody);
      const text = lines(body);
      expect(text).toHaveLength(100);
      text.forEach((line, i) => {
        const e = json[i] as JsonPoint;
        const route = (e.attributes.route as string).replace(/[,= ]/g, (c) => `\\${c}`);
        expect(line).toMatch(/^render_frame_drop,app=[^ ]+,browser=[^ ]+,route=[^ ]+ value=[^ ]+ \d{19}$/);
        expect(
          line.startsWith(
            `render_frame_drop,app=${e.source.app},browser=${e.attributes.browser},route=${route} value=${e.value} ${e.ts}`,
          ),
        ).toBe(true);
        expect(e.name).toBe('render_frame_drop');
        expect(Object.keys(e.source)).toEqual(['app']);
        expect(Object.keys(e.attributes).sort()).toEqual(['browser', 'route']);
      });
    });
  });

  it('has about as many series as a metrics user keys (app × route × browser)', () => {
    const series = new Set(points.tagsLines.flatMap((b) => lines(b).map((l) => l.split(' ')[0])));
    expect(series.size).toBeGreaterThan(100);
    expect(series.size).toBeLessThanOrEqual(144);
  });

  it('is taken by the collector as it is', () => {
    const e = jsonPoints(points.tagsJson[0] as RequestBody)[0] as JsonPoint;
    const v = validateEvent(e, LIMITS, e.ts);
    expect(v.ok && v.event.type === 'metric' && v.event.attributes).toEqual({
      route: e.attributes.route,
      browser: e.attributes.browser,
    });
  });

  it('makes new points each cycle: new ids for Sluice, new times for the line protocol', () => {
    const json = points.tagsJson[0] as RequestBody;
    const line = points.tagsLines[0] as RequestBody;
    const ids0 = jsonPoints(json).map((e) => e.id);
    const times0 = lines(line).map((l) => l.split(' ')[2]);
    recycleJson(json, 7);
    recycleLines(line, 7);
    const ids7 = jsonPoints(json).map((e) => e.id);
    const times7 = lines(line).map((l) => l.split(' ')[2]);
    expect(new Set([...ids0, ...ids7]).size).toBe(200);
    times7.forEach((t, i) => expect(BigInt(t as string) - BigInt(times0[i] as string)).toBe(7_000_000n));
  });

  it('keeps the every-attribute set beside it', () => {
    expect(points.lines).toHaveLength(10);
    expect(lines(points.lines[0] as RequestBody)[0]).toMatch(/ value=[^,]+,host="web-\d+"/);
  });
});
