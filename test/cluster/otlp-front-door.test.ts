import { waitFor } from '../support/http';
import { bySeq, runOtelClient, storedEvents, uniqueApp, type Encoding } from '../integration/otlp-support';
import { startTestCluster, type TestCluster } from './support/test-cluster';

let t: TestCluster;

beforeAll(async () => {
  t = await startTestCluster('otlp_front');
}, 90_000);

afterAll(async () => {
  await t?.close();
});

/** The OpenTelemetry JS SDK exporting through the real HAProxy's OTLP port (4318 in compose). */
describe.each<Encoding>(['json', 'protobuf'])('OTLP through the front door (%s)', (encoding) => {
  it('an export lands once and reads back through the API front door', async () => {
    const app = uniqueApp(`front-${encoding}`);
    const run = await runOtelClient({ scenario: 'logs', url: t.cluster.otlpUrl, app, encoding });
    expect(run.exports).toEqual([{ code: 0 }]);
    const events = await waitFor(
      '22 events read back',
      async () => {
        const e = await storedEvents(t.cluster.url, app);
        return e.length >= 22 ? e : null;
      },
      15_000,
    );
    expect(events).toHaveLength(22);
    for (const [, copies] of bySeq(events)) expect(copies).toHaveLength(1);
  });
});
