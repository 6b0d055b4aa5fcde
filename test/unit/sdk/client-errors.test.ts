import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SDK_ERROR_CODES, SluiceSdkError } from '../../../sdk/src/sdk-error';
import { accepted, settle, status, throttled } from './fakes';
import { harness, watchUnhandledRejections } from './harness';

const unhandled = watchUnhandledRejections();
let warn: jest.SpyInstance;
let debug: jest.SpyInstance;

beforeEach(() => {
  warn = jest.spyOn(console, 'warn').mockImplementation(() => {});
  debug = jest.spyOn(console, 'debug').mockImplementation(() => {});
});
afterEach(() => {
  warn.mockRestore();
  debug.mockRestore();
  expect(unhandled).toEqual([]);
});

/** The options a user gets: no `onError` (the harness sets a silent one). */
const defaults = { onError: undefined };
const warnings = (): string[] => warn.mock.calls.map((c) => String(c[0]));
const unauthorized = (code = 401) => ({
  status: code,
  body: { error: 'unauthorized', message: 'API key missing or not valid.' },
});

describe('client: problems by default (no onError): one console warning per kind, not per request', () => {
  it('a wrong apiKey (401): flush() resolves, one warning naming the status and apiKey, events counted dropped', async () => {
    const { client, transport } = harness({ ...defaults, apiKey: 'sk_in_wrong' });
    transport.answerAlways(() => unauthorized());
    for (let i = 0; i < 3; i++) client.lifecycle('app.started');
    await expect(client.flush()).resolves.toBeUndefined();
    expect(transport.requests).toHaveLength(3); // batchSize 1: three requests, three 401s
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatch(/^sluice: the collector refused the API key \(401 unauthorized: .*apiKey/);
    expect(client.stats()).toMatchObject({ sent: 0, dropped: { client_error: 3 } });
  });

  it('403 is the same problem; without an apiKey the warning says to set one', async () => {
    const { client, transport } = harness(defaults);
    transport.answerAlways(() => unauthorized(403));
    client.lifecycle('app.started');
    await client.flush();
    expect(warnings()).toEqual([expect.stringMatching(/403.*auth on: set the client's apiKey/)]);
  });

  it('a name refused at capture: one warning for many refusals, saying what a name must be', () => {
    const { client } = harness(defaults);
    client.metric('render frame', 3);
    client.lifecycle('');
    client.log('x'.repeat(200), 'text');
    client.metric('ok.name', NaN);
    expect(warnings()).toEqual([
      expect.stringMatching(
        /^sluice: metric\("render frame"\) dropped at capture: the name must be a dotted identifier/,
      ),
    ]);
    expect(client.stats().dropped.invalid).toBe(4);
  });

  it('events the collector rejects: one warning with their names and reasons', async () => {
    const { client, transport } = harness({ ...defaults, batchSize: 3 });
    transport.answerAlways(() => ({
      status: 202,
      body: {
        accepted: 1,
        rejected: [
          { index: 0, reason: 'app_mismatch', field: 'source.app' },
          { index: 2, reason: 'ts_out_of_range', field: 'ts' },
        ],
      },
    }));
    client.lifecycle('a.one');
    client.lifecycle('a.two');
    client.lifecycle('a.three');
    client.lifecycle('a.four');
    await client.flush();
    expect(transport.requests).toHaveLength(2);
    expect(warnings()).toEqual([
      expect.stringMatching(
        /rejected 2 of 3 events as invalid \(a\.one: app_mismatch \(source\.app\); a\.three: ts_out_of_range \(ts\)\)/,
      ),
    ]);
  });

  it('a request whose every event is rejected (422): dropped as rejected, not resent, with the reasons and hints', async () => {
    const { client, transport } = harness({ ...defaults, batchSize: 2 });
    const hint = 'ts must be milliseconds since the epoch, within 7 days back';
    transport.answerAlways(() => ({
      status: 422,
      body: {
        accepted: 0,
        rejected: [
          { index: 0, reason: 'ts_out_of_range', field: 'ts', hint },
          { index: 1, reason: 'ts_out_of_range', field: 'ts' },
        ],
        error: 'events_rejected',
        message: 'Every event of the request was rejected as invalid.',
      },
    }));
    client.lifecycle('a.one');
    client.lifecycle('a.two');
    await client.flush();
    expect(transport.requests).toHaveLength(1);
    expect(client.stats()).toMatchObject({ sent: 0, dropped: { rejected: 2, client_error: 0 } });
    expect(warnings()).toEqual([
      expect.stringMatching(
        /rejected 2 of 2 events as invalid \(a\.one: ts_out_of_range \(ts\); a\.two: ts_out_of_range \(ts\)\); they are dropped: ts must be milliseconds since the epoch, within 7 days back \(said once/,
      ),
    ]);
  });

  it('an unreachable collector: one warning (events kept and retried), then each kind once', async () => {
    const { client, clock, transport } = harness(defaults);
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: new Error('connect ECONNREFUSED 127.0.0.1:9'),
    });
    transport.answer(refused, refused, refused, status(503), status(503), unauthorized());
    client.error('boom');
    await clock.advance(10_000);
    expect(transport.requests.length).toBeGreaterThanOrEqual(6);
    expect(warnings()).toEqual([
      expect.stringMatching(
        /^sluice: collector unreachable at http:\/\/collector\.test\/v1\/events: fetch failed \(connect ECONNREFUSED 127\.0\.0\.1:9\); 1 event kept, retried with backoff/,
      ),
      expect.stringMatching(/^sluice: the collector answered 503 x: x; 1 event kept/),
      expect.stringMatching(/^sluice: the collector refused the API key/),
    ]);
  });

  it('a 404: the endpoint is probably wrong', async () => {
    const { client, transport } = harness(defaults);
    transport.answer({ status: 404, body: { error: 'not_found', message: 'No such route.' } });
    client.error('boom');
    await client.flush();
    expect(warnings()).toEqual([
      expect.stringMatching(
        /answered 404 not_found: No such route\.; 1 event dropped .*is endpoint the collector's POST \/v1\/events URL\?/,
      ),
    ]);
  });

  it('429s and successes are no problem: nothing is printed', async () => {
    const { client, clock, transport } = harness({ ...defaults, batchSize: 2 });
    transport.answer(throttled(2, [1], '1'), accepted(1));
    client.lifecycle('a.one');
    client.lifecycle('a.two');
    await clock.advance(2000);
    expect(client.stats().sent).toBe(2);
    expect(warnings()).toEqual([]);
  });
});

describe('client: onError', () => {
  it('receives every problem, typed, and replaces the console warnings', async () => {
    const seen: SluiceSdkError[] = [];
    const { client, transport } = harness({ apiKey: 'sk_in_wrong', onError: (e) => seen.push(e) });
    transport.answerAlways(() => unauthorized());
    client.lifecycle('app.started');
    client.lifecycle('app.ready');
    client.metric('bad name', 1);
    await client.flush();
    expect(seen.map((e) => [e.code, e.status, e.events, e.retrying])).toEqual([
      ['invalid_event', undefined, 1, false],
      ['unauthorized', 401, 1, false],
      ['unauthorized', 401, 1, false],
    ]);
    expect(seen[0]).toBeInstanceOf(SluiceSdkError);
    expect(seen[0]).toBeInstanceOf(Error);
    expect(seen[0]!.rejected).toEqual([{ name: 'bad name', reason: 'name_invalid' }]);
    expect(warnings()).toEqual([]);
  });

  it('gets the rejected events of a 429 too, and a network error as its cause', async () => {
    const seen: SluiceSdkError[] = [];
    const { client, clock, transport } = harness({ batchSize: 2, onError: (e) => seen.push(e) });
    const offline = new TypeError('fetch failed');
    transport.answer(throttled(2, [1], '1', [0]), offline, accepted(1));
    client.lifecycle('a.one');
    client.lifecycle('a.two');
    await clock.advance(5000);
    expect(seen.map((e) => e.code)).toEqual(['events_rejected', 'unreachable']);
    expect(seen[0]!.rejected).toEqual([{ name: 'a.one', reason: 'name_invalid' }]);
    expect(seen[1]).toMatchObject({ retrying: true, events: 1, cause: offline });
    expect(client.stats().sent).toBe(1);
  });

  it('a throwing or rejecting onError reaches neither the host nor the event loop: counted as internal errors', async () => {
    let calls = 0;
    const { client, transport } = harness({
      onError: (() => {
        calls++;
        if (calls === 1) throw new Error('handler bug');
        return Promise.reject(new Error('async handler bug'));
      }) as () => void,
    });
    transport.answerAlways(() => unauthorized());
    expect(() => client.metric('bad name', 1)).not.toThrow();
    client.lifecycle('app.started');
    await expect(client.flush()).resolves.toBeUndefined();
    await settle(); // lets the rejection reach its handler
    expect(calls).toBe(2);
    expect(client.stats().internalErrors).toBe(2);
  });

  it('hears of options that disable the client (instead of the console)', () => {
    const seen: SluiceSdkError[] = [];
    harness({ endpoint: '', onError: (e) => seen.push(e) });
    expect(seen.map((e) => [e.code, e.message])).toEqual([
      ['invalid_options', 'client disabled: endpoint must be a URL'],
    ]);
    expect(warnings()).toEqual([]);
  });
});

describe('client: debug', () => {
  it('prints every problem and every request outcome', async () => {
    const { client, clock, transport } = harness({ apiKey: 'sk_in_wrong', debug: true });
    transport.answer(unauthorized(), unauthorized(), throttled(1, [0], '2'), accepted(1));
    client.lifecycle('a.one');
    client.lifecycle('a.two');
    client.lifecycle('a.three');
    await clock.advance(5000);
    expect(warnings()).toHaveLength(2); // each 401, not once
    expect(debug.mock.calls.map((c) => String(c[0]))).toEqual([
      'sluice: POST of 1 event: 401, all dropped',
      'sluice: POST of 1 event: 401, all dropped',
      expect.stringMatching(
        /^sluice: POST of 1 event: 429, 0 taken, 1 throttled, 0 rejected; next request at 2025-/,
      ),
      'sluice: POST of 1 event: 202, 1 taken, 0 rejected',
    ]);
  });
});

describe('docs/sdk.md', () => {
  it('lists every error code, and no other', () => {
    const doc = readFileSync(path.resolve(__dirname, '../../../docs/sdk.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## When something is wrong'));
    const rows = [...section.matchAll(/^\| `([a-z_]+)` +\|/gm)].map((m) => m[1]);
    const listed = rows.slice(1); // the first is the header, `code`
    expect(listed).toEqual([...SDK_ERROR_CODES]);
  });
});
