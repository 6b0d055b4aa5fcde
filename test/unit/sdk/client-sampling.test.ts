import { throttleAll } from './fakes';
import { harness } from './harness';

/**
 * The dynamic sampling state machine driven through a client by a fake
 * collector (docs/ARCHITECTURE.md; our reading is written down in sdk/src/sampler.ts).
 * `random` is 0.3: a non-error event is kept while the effective rate is
 * above 0.3, i.e. at 1.0 and 0.5, and sampled out at 0.1.
 */
describe('client: dynamic sampling through every transition', () => {
  it('a 429 refused unread (`overloaded`, no advice) leaves the rate: it says nothing of the app', async () => {
    const { client, clock, transport } = harness({ random: () => 0.3 });
    const overloaded = {
      status: 429,
      retryAfter: '2',
      body: { accepted: 0, rejected: [], error: 'overloaded', message: 'Collector is saturated' },
    };
    transport.answer(overloaded, overloaded);
    client.log('app.line', 'one');
    await clock.advance(0);
    expect(transport.requests).toHaveLength(1);
    expect(client.stats()).toMatchObject({ dynamicRate: 1, effectiveRate: 1 });
    await clock.advance(2000); // Retry-After: resent, refused unread again
    expect(transport.requests).toHaveLength(2);
    expect(client.stats().dynamicRate).toBe(1);
    client.metric('render.frame_drop', 1);
    expect(client.stats().dropped.sampled).toBe(0);
    // It is still waited out, with backoff: nothing is resent before Retry-After.
    expect(client.stats().requests.throttled).toBe(2);
  });

  it('1.0 → 429 → 0.5 → 429 → 0.1 → 10 successes → 0.5 → 30 successes → 1.0', async () => {
    const { client, clock, transport } = harness({ random: () => 0.3 });
    transport.answer(throttleAll('1'), throttleAll('1'));

    client.error(new Error('first'));
    await clock.advance(0);
    expect(transport.requests).toHaveLength(1);
    expect(client.stats()).toMatchObject({ dynamicRate: 0.5, effectiveRate: 0.5, successStreak: 0 });

    await clock.advance(1000); // Retry-After: 1 → resent, throttled again
    expect(transport.requests).toHaveLength(2);
    expect(client.stats()).toMatchObject({ dynamicRate: 0.1, effectiveRate: 0.1 });

    // At 0.1 metrics (0.3 ≥ 0.1) are sampled out; errors never are.
    client.metric('render.frame_drop', 1);
    client.error(new Error('second'));
    expect(client.stats().dropped.sampled).toBe(1);
    expect(client.stats().buffered).toMatchObject({ error: 2, metric: 0 });

    await clock.advance(1000); // both errors go, one per request: 2 successes
    expect(client.stats()).toMatchObject({ dynamicRate: 0.1, successStreak: 2 });
    for (let i = 0; i < 7; i++) client.error(new Error(`e${i}`));
    await clock.advance(0);
    expect(client.stats()).toMatchObject({ dynamicRate: 0.1, successStreak: 9 });
    client.error(new Error('tenth'));
    await clock.advance(0);
    expect(client.stats()).toMatchObject({ dynamicRate: 0.5, effectiveRate: 0.5, successStreak: 0 });

    client.metric('render.frame_drop', 2); // 0.3 < 0.5: kept now
    expect(client.stats().dropped.sampled).toBe(1);
    for (let i = 0; i < 28; i++) client.lifecycle('app.tick');
    await clock.advance(0);
    expect(client.stats()).toMatchObject({ dynamicRate: 0.5, successStreak: 29 });
    client.lifecycle('app.tick');
    await clock.advance(0);
    expect(client.stats()).toMatchObject({ dynamicRate: 1, effectiveRate: 1, successStreak: 0 });
    expect(client.stats().requests).toEqual({ succeeded: 40, throttled: 2, failed: 0 });
  });

  it('a 429 while recovering at 0.5 goes down to 0.1 and restarts the count', async () => {
    const { client, clock, transport } = harness();
    transport.answer(throttleAll('0'));
    client.error('x');
    await clock.advance(0);
    expect(client.stats().dynamicRate).toBe(0.5);
    for (let i = 0; i < 20; i++) client.error('y');
    await clock.advance(100);
    expect(client.stats()).toMatchObject({ dynamicRate: 0.5, successStreak: 21 });
    transport.answer(throttleAll('0'));
    client.error('z');
    await clock.advance(0);
    expect(client.stats()).toMatchObject({ dynamicRate: 0.1, successStreak: 0 });
  });

  it('a network error or 5xx breaks the streak without lowering the rate', async () => {
    const { client, clock, transport } = harness();
    transport.answer(throttleAll('0'));
    client.error('x');
    await clock.advance(0);
    for (let i = 0; i < 28; i++) client.error('y');
    await clock.advance(100);
    expect(client.stats()).toMatchObject({ dynamicRate: 0.5, successStreak: 29 });
    transport.answer(new Error('ECONNRESET'));
    client.error('z');
    await clock.advance(1000);
    expect(client.stats()).toMatchObject({ dynamicRate: 0.5, successStreak: 1 }); // failed, then resent ok
  });

  it('the dynamic rate multiplies the static rate; errors get only the static rate', async () => {
    const { client, clock, transport } = harness({ sampleRate: 0.5, random: () => 0.3 });
    client.metric('m', 1); // 0.3 < 0.5 × 1.0
    expect(client.stats().dropped.sampled).toBe(0);
    transport.answer(throttleAll('0'));
    await clock.advance(0);
    expect(client.stats()).toMatchObject({ dynamicRate: 0.5, effectiveRate: 0.25 });
    client.metric('m', 1); // 0.3 ≥ 0.25
    client.log('app.log', 'hello');
    client.lifecycle('app.paused');
    expect(client.stats().dropped.sampled).toBe(3);
    client.error(new Error('kept')); // 0.3 < 0.5 static
    expect(client.stats().buffered.error).toBe(1);
  });

  it('the static rate samples errors too', () => {
    const { client } = harness({ sampleRate: 0.2, random: () => 0.3 });
    client.error(new Error('dropped'));
    expect(client.stats().dropped.sampled).toBe(1);
    const none = harness({ sampleRate: 0, random: () => 0 });
    none.client.error('x');
    expect(none.client.stats().dropped.sampled).toBe(1);
  });
});
