import type { TelemetryEvent } from '../../../src/events/types';
import { eventMessages } from '../../../src/queue/event-batches';
import { decodeEvent, decodeEvents, encodeEvent } from '../../../src/queue/event-codec';

let n = 0;
function event(overrides: Partial<TelemetryEvent> = {}): TelemetryEvent {
  n++;
  return {
    id: `0190f3c2-0000-7000-8000-${String(n).padStart(12, '0')}`,
    type: 'metric',
    name: 'render.frame_drop',
    ts: 1_764_590_400_000 + n,
    app: 'web-shop',
    version: null,
    env: null,
    value: n,
    summary: null,
    error: null,
    message: null,
    attributes: { route: '/checkout', π: 'ünïcode' },
    ...overrides,
  };
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
    const one = Buffer.byteLength(JSON.stringify(events[0]));
    const limit = one * 7 + 10;
    const messages = eventMessages('standard', events, limit);
    expect(messages.length).toBeGreaterThan(6);
    for (const m of messages) expect(m.data.byteLength).toBeLessThanOrEqual(limit);
    expect(messages.flatMap((m) => decodeEvents(m.data))).toEqual(events);
    expect(messages.reduce((sum, m) => sum + m.events, 0)).toBe(50);
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
  it('marks an element that is not an event as null and keeps its neighbours', () => {
    const good = event();
    const data = new TextEncoder().encode(JSON.stringify([good, { id: 'nope' }, good]));
    expect(decodeEvents(data)).toEqual([good, null, good]);
  });

  it('reads a single event object (a dead letter) and refuses what is not JSON events', () => {
    const e = event();
    expect(decodeEvent(encodeEvent(e))).toEqual(e);
    expect(decodeEvents(new TextEncoder().encode('{"not": "an event"'))).toBeNull();
    expect(decodeEvents(new TextEncoder().encode('{"not": "an event"}'))).toBeNull();
    expect(decodeEvents(new Uint8Array([0xff, 0xfe]))).toBeNull();
  });
});
