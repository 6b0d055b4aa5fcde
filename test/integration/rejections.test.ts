import {
  createClient,
  fetchTransport,
  systemClock,
  type SluiceSdkError,
  type Transport,
} from '../../sdk/src/index';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { metric } from '../support/events';
import { getJson, postEvents } from '../support/http';
import { tempSqlitePath } from '../support/postgres';

const TS_HINT =
  "ts must be milliseconds since the epoch, within 7 days back and 5 minutes ahead of the collector's clock (seconds are 1000 times too small)";

/**
 * What a client hears when events are invalid, with the defaults a user gets: a hint per reason,
 * 422 when nothing of the request could be taken, and an id assigned to an event sent without one.
 */
describe('rejections say what to do (a collector process with the defaults)', () => {
  let c: CollectorProcess;
  beforeAll(async () => {
    c = await startCollectorProcess(
      { SLUICE_SQLITE_PATH: tempSqlitePath('rejections') },
      { defaults: 'user' },
    );
  });
  afterAll(async () => {
    await c?.stop();
  });

  it('a ts in seconds: 422 events_rejected, and the rejection says how ts is read', async () => {
    const answer = await postEvents(c.url, [metric('hints', { ts: Math.floor(Date.now() / 1000) })]);
    expect(answer.status).toBe(422);
    expect(answer.body).toEqual({
      accepted: 0,
      rejected: [{ index: 0, reason: 'ts_out_of_range', field: 'ts', hint: TS_HINT }],
      error: 'events_rejected',
      message: expect.stringContaining('Resending it cannot help'),
    });
  });

  it('some valid: 202, the invalid ones listed, the hint on the first of each reason', async () => {
    const answer = await postEvents(c.url, [
      metric('hints', { ts: 1 }),
      metric('hints'),
      metric('hints', { ts: 2 }),
      metric('hints', { id: 'not-a-uuid' }),
    ]);
    expect(answer.status).toBe(202);
    expect(answer.body).toEqual({
      accepted: 1,
      rejected: [
        { index: 0, reason: 'ts_out_of_range', field: 'ts', hint: TS_HINT },
        { index: 2, reason: 'ts_out_of_range', field: 'ts' },
        { index: 3, reason: 'id_invalid', field: 'id', hint: expect.stringMatching(/^id must be a UUID/) },
      ],
    });
  });

  it('an empty events array is still 202 (nothing was rejected)', async () => {
    const answer = await postEvents(c.url, []);
    expect({ status: answer.status, body: answer.body }).toEqual({
      status: 202,
      body: { accepted: 0, rejected: [] },
    });
  });

  it('an event without id is stored under an id the collector assigns (a UUID v7); sent twice, it is stored twice', async () => {
    const { id: _id, ...noId } = metric('no-id');
    for (let i = 0; i < 2; i++) {
      const answer = await postEvents(c.url, [noId]);
      expect({ status: answer.status, body: answer.body }).toEqual({
        status: 202,
        body: { accepted: 1, rejected: [] },
      });
    }
    const read = await getJson(`${c.url}/v1/events?app=no-id`);
    const ids = (read.body.events as Array<{ id: string }>).map((e) => e.id);
    expect(ids).toHaveLength(2);
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(2);
  });

  it('the SDK on a clock a day ahead: one request, its events dropped as rejected with the reason and hint, never resent', async () => {
    const errors: SluiceSdkError[] = [];
    let requests = 0;
    const skewed = { ...systemClock, now: () => Date.now() + 86_400_000 };
    const endpoint = `${c.url}/v1/events`;
    const client = createClient({
      endpoint,
      app: 'skewed',
      clock: skewed,
      onError: (e) => errors.push(e),
      transport: countingFetch(endpoint, () => requests++),
    });
    client.lifecycle('app.started');
    client.log('app.log', 'hello');
    await client.flush({ timeoutMs: 5000 });
    expect(requests).toBe(1);
    expect(client.stats()).toMatchObject({ sent: 0, dropped: { rejected: 2, client_error: 0 } });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'events_rejected', status: 422, events: 2, retrying: false });
    expect(errors[0]?.rejected[0]).toEqual({
      name: 'app.started',
      reason: 'ts_out_of_range',
      field: 'ts',
      hint: TS_HINT,
    });
    expect(errors[0]?.message).toContain(TS_HINT);
    await client.close();
  });
});

/** `fetchTransport`, counting the requests that carry events. */
function countingFetch(endpoint: string, onRequest: () => void): Transport {
  const inner = fetchTransport(endpoint);
  return {
    send: (request) => {
      // Requests carrying events: the SDK's client report may also go alone, at flush().
      if (request.events.length > 0) onRequest();
      return inner.send(request);
    },
  };
}
