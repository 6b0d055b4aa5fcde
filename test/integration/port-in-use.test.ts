/**
 * `sluice serve` as a user starts it, on a machine where a port it opens is already taken (an
 * OpenTelemetry Collector on 4318, another service on 8080): it stops at once with one line that
 * names the setting that moves the port, and for the OTLP receiver how to turn it off.
 */
import net from 'node:net';
import { freePort } from '../../src/dev-cluster/free-port';
import { tempSqlitePath } from '../support/postgres';
import { runCli } from '../support/run-cli';

async function occupied(): Promise<{ port: number; close(): void }> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => server.close() };
}

describe('a port already in use', () => {
  it('the OTLP port: names SLUICE_OTLP_PORT and how to turn the receiver off', async () => {
    const taken = await occupied();
    try {
      const r = await runCli(['serve'], {
        SLUICE_SQLITE_PATH: tempSqlitePath('port_otlp'),
        SLUICE_PORT: String(await freePort()),
        SLUICE_OTLP_PORT: String(taken.port),
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `sluice: serve failed: port ${taken.port} on 0.0.0.0 is in use by another process: ` +
          `set SLUICE_OTLP_PORT to a free port, or SLUICE_OTLP_PORT=0 to turn the OTLP receiver off\n`,
      );
    } finally {
      taken.close();
    }
  });

  it('the HTTP port: names SLUICE_PORT', async () => {
    const taken = await occupied();
    try {
      const r = await runCli(['serve'], {
        SLUICE_SQLITE_PATH: tempSqlitePath('port_http'),
        SLUICE_PORT: String(taken.port),
        SLUICE_OTLP_PORT: String(await freePort()),
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(
        `sluice: serve failed: port ${taken.port} on 0.0.0.0 is in use by another process: ` +
          `set SLUICE_PORT to a free port\n`,
      );
    } finally {
      taken.close();
    }
  });
});
