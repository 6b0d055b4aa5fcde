import { connect } from 'node:net';
import { startCollectorProcess, type CollectorProcess } from '../support/collector-process';
import { tempSqlitePath } from '../support/postgres';

/** Sends `raw` on a new connection and collects everything the collector answers until it closes. */
function exchange(port: number, raw: string): Promise<{ text: string; reset: boolean }> {
  return new Promise((resolve) => {
    let text = '';
    let reset = false;
    const socket = connect(port, '127.0.0.1', () => socket.write(raw));
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (text += d));
    socket.on('error', (err: NodeJS.ErrnoException) => (reset ||= err.code === 'ECONNRESET'));
    socket.on('close', () => resolve({ text, reset }));
  });
}

/** Requests Node cannot parse get a catalogue answer the client can read, with the defaults a user gets. */
describe('answers to requests that are not valid HTTP', () => {
  let c: CollectorProcess;
  beforeAll(async () => {
    c = await startCollectorProcess(
      { SLUICE_SQLITE_PATH: tempSqlitePath('client-errors') },
      { defaults: 'user' },
    );
  });
  afterAll(async () => {
    await c?.stop();
  });

  it('a request line over 16 KiB is 431 headers_too_large, read by the client, not a reset', async () => {
    for (let i = 0; i < 5; i++) {
      const { text, reset } = await exchange(
        c.port,
        `GET /v1/events?app=a&${'k'.repeat(20_000)}=1 HTTP/1.1\r\nHost: x\r\n\r\n`,
      );
      expect(reset).toBe(false);
      expect(text).toMatch(/^HTTP\/1\.1 431 /);
      expect(text).toContain('"error":"headers_too_large"');
    }
  });

  it('bad framing is 400 malformed_request', async () => {
    const { text } = await exchange(c.port, 'NOT HTTP AT ALL\r\n\r\n');
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text).toContain('"error":"malformed_request"');
  });

  it('the collector still answers afterwards', async () => {
    expect((await fetch(`${c.url}/livez`)).status).toBe(200);
  });
});
