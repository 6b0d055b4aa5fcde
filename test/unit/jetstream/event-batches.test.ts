import type { TelemetryEvent } from '../../../src/events/types';
import { eventMessages } from '../../../src/jetstream/event-batches';
import { COMPACT_FORMAT } from '../../../src/jetstream/compact-payload';
import {
  decodeEvent,
  decodeEvents,
  encodeEvent,
  payloadElement,
  unreadableDetail,
} from '../../../src/jetstream/event-codec';
import { attrs, telemetryEvent } from '../../support/telemetry-events';

let n = 0;
function event(overrides: Partial<TelemetryEvent> = {}): TelemetryEvent {
  n++;
  return telemetryEvent('metric', {
    id: `0190f3c2-0000-7000-8000-${String(n).padStart(12, '0')}`,
    name: 'render.frame_drop',
    ts: 1_764_590_400_000 + n,
    value: n,
    attributes: attrs({ route: '/checkout', π: 'ünïcode' }),
    ...overrides,
  });
}

describe('eventMessages', () => {
  it('puts a request’s events of one lane in one message that decodes to the same events', () => {
    const events = Array.from({ length: 100 }, () => event());
    const [only, ...rest] = eventMessages('standard', events, 1024 * 1024);
    expect(rest).toEqual([]);
    expect(only?.events).toBe(100);
    expect(decodeEvents(only?.data ?? new Uint8Array())).toEqual(events);
  });

  it('splits below the payload limit, counting UTF-8 bytes, and keeps every event once, in order', () => {
    const events = Array.from({ length: 50 }, () => event());
    const one = eventMessages('standard', events.slice(0, 1), 1e6)[0]?.data.byteLength ?? 0;
    const limit = one * 7 + 10;
    const messages = eventMessages('standard', events, limit);
    expect(messages.length).toBeGreaterThan(6);
    for (const m of messages) expect(m.data.byteLength).toBeLessThanOrEqual(limit);
    expect(messages.flatMap((m) => decodeEvents(m.data))).toEqual(events);
    expect(messages.reduce((sum, m) => sum + m.events, 0)).toBe(50);
  });

  it('publishes payload format 2: the version, then one array per event, fields by position', () => {
    const e = event({ version: '1.4.2', attributes: { method: 'GET', ok: true, status: 200 } });
    const [m] = eventMessages('standard', [e], 1024 * 1024);
    expect(JSON.parse(new TextDecoder().decode(m?.data))).toEqual([
      COMPACT_FORMAT,
      [
        e.id,
        'metric',
        e.name,
        e.ts,
        'web-shop',
        '1.4.2',
        null,
        e.value,
        null,
        null,
        null,
        ['method', 'GET', 'ok', true, 'status', 200],
      ],
    ]);
  });

  it('round-trips every field of every event type, summaries, errors, unicode and attribute order', () => {
    const events = [
      event({ value: null, summary: { count: 3, min: -1.5, max: 2, sum: 1, avg: 0.333 } }),
      event({
        type: 'error',
        name: 'checkout.failed',
        value: null,
        error: { message: 'boom\n"quoted"', kind: 'TypeError', stack: null },
        attributes: { z: 'last', a: 'first', '10': 'number-like', __proto__: 'own' },
      }),
      event({ type: 'log', value: null, message: 'line\twith\ttabs \u{1F600}', env: 'prod' }),
      event({ type: 'lifecycle', value: null, attributes: {} }),
    ];
    const [m] = eventMessages('error', events, 1024 * 1024);
    const decoded = decodeEvents(m?.data ?? new Uint8Array());
    expect(decoded).toEqual(events);
    for (const [i, d] of (decoded ?? []).entries()) {
      expect(Object.keys(d?.attributes ?? {})).toEqual(Object.keys(events[i]?.attributes ?? {}));
      expect(Object.getPrototypeOf(d?.attributes)).toBeNull();
    }
  });

  it('gives the same events the same message id, and any other events or lane another one', () => {
    const events = Array.from({ length: 10 }, () => event());
    const id = (lane: 'error' | 'standard', list: TelemetryEvent[]) =>
      eventMessages(lane, list, 1024 * 1024)[0]?.msgId;
    expect(id('standard', events)).toBe(
      id(
        'standard',
        events.map((e) => ({ ...e })),
      ),
    );
    expect(id('standard', events)).not.toBe(id('error', events));
    expect(id('standard', events)).not.toBe(id('standard', events.slice(1)));
    const later = events.map((e, i) => (i === 3 ? { ...e, ts: e.ts + 1 } : e));
    expect(id('standard', events)).not.toBe(id('standard', later));
  });
});

describe('decodeEvents', () => {
  it('still reads payload format 1, a JSON array of event objects (messages already in a stream)', () => {
    const events = [event(), event({ type: 'log', value: null, message: 'hello' })];
    expect(decodeEvents(new TextEncoder().encode(JSON.stringify(events)))).toEqual(events);
  });

  it('marks a format-2 element that is not an event as null, keeps its neighbours, and dead-letters it alone', () => {
    const good = event();
    const [m] = eventMessages('standard', [good, good], 1024 * 1024);
    const doc = JSON.parse(new TextDecoder().decode(m?.data)) as unknown[];
    const bad = [
      ['not-a-uuid', ...(doc[1] as unknown[]).slice(1)],
      { id: good.id },
      [...(doc[1] as unknown[]).slice(0, 11)],
    ];
    const poisoned = new TextEncoder().encode(JSON.stringify([doc[0], doc[1], ...bad, doc[2]]));
    expect(decodeEvents(poisoned)).toEqual([good, null, null, null, good]);
    expect(JSON.parse(new TextDecoder().decode(payloadElement(poisoned, 1)))).toEqual(bad[0]);
    expect(JSON.parse(new TextDecoder().decode(payloadElement(poisoned, 2)))).toEqual(bad[1]);
  });

  it('refuses a payload of a format it does not know, saying so', () => {
    const future = new TextEncoder().encode(JSON.stringify([3, 'whatever']));
    expect(decodeEvents(future)).toBeNull();
    expect(unreadableDetail(future)).toMatch(/format 3 .*upgrade the workers/);
    expect(unreadableDetail(new TextEncoder().encode('{"not'))).toBe('payload is not JSON Sluice events');
  });

  it('marks an element that is not an event as null and keeps its neighbours', () => {
    const good = event();
    const data = new TextEncoder().encode(JSON.stringify([good, { id: 'nope' }, good]));
    expect(decodeEvents(data)).toEqual([good, null, good]);
    expect(JSON.parse(new TextDecoder().decode(payloadElement(data, 1)))).toEqual({ id: 'nope' });
  });

  it('reads a single event object (a dead letter) and refuses what is not JSON events', () => {
    const e = event();
    expect(decodeEvent(encodeEvent(e))).toEqual(e);
    expect(decodeEvents(new TextEncoder().encode('{"not": "an event"'))).toBeNull();
    expect(decodeEvents(new TextEncoder().encode('{"not": "an event"}'))).toBeNull();
    expect(decodeEvents(new Uint8Array([0xff, 0xfe]))).toBeNull();
  });
});
