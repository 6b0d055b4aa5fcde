import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { peakRssKiB, startCollectorProcess } from '../support/collector-process';
import { tempSqlitePath } from '../support/postgres';

const CLI = path.resolve(__dirname, '../../dist/src/cli.js');

function runCli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
}

describe('sluice CLI', () => {
  it.each([
    ['SLUICE_PORT', 'eighty'],
    ['SLUICE_QUEUE_CAPACITY', '-1'],
    ['SLUICE_ACK', 'sometimes'],
    ['SLUICE_DATABASE_URL', 'http://localhost'],
    ['SLUICE_MAX_BODY_BYTES', '1TB'],
  ])('a bad %s stops start-up with a message naming it', (variable, value) => {
    const r = runCli(['serve'], { [variable]: value, SLUICE_SQLITE_PATH: tempSqlitePath('badcfg') });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`invalid configuration: ${variable}=`);
  });

  it('a mistyped flag stops start-up', () => {
    const r = runCli(['serve', '--prot', '9000'], {});
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--prot');
  });

  it('--help lists the settings with defaults', () => {
    const r = runCli(['--help'], {});
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/SLUICE_QUEUE_CAPACITY\s+--queue-capacity\s+default 10000/);
    expect(r.stdout).toMatch(/SLUICE_MAX_BODY_BYTES\s+--max-body-bytes\s+default 1MiB/);
  });

  it('migrate applies migrations to a SQLite file and exits 0', () => {
    const r = runCli(['migrate'], {
      SLUICE_SQLITE_PATH: tempSqlitePath('migrate'),
      SLUICE_LOG_LEVEL: 'info',
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('migrations applied');
  });

  it('migrate against a dead PostgreSQL fails within its deadline instead of hanging', () => {
    const started = Date.now();
    const r = runCli(['migrate'], {
      SLUICE_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none',
      SLUICE_STORAGE_TIMEOUT_MS: '200',
      SLUICE_LOG_LEVEL: 'silent',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('migrate failed');
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('gzip bomb', () => {
  it('gets 413 while the collector inflates no more than the limit', async () => {
    const c = await startCollectorProcess({ SLUICE_SQLITE_PATH: tempSqlitePath('bomb') });
    try {
      const bomb = gzipSync(Buffer.alloc(256 * 1024 * 1024, 0x20)); // 256 MiB of spaces in ~250 KiB
      const pid = c.child.pid as number;
      const before = await peakRssKiB(pid);
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${c.url}/v1/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          body: bomb as unknown as BodyInit,
        });
        expect(res.status).toBe(413);
        expect((await res.json()).error).toBe('body_too_large');
      }
      const after = await peakRssKiB(pid);
      expect(after - before).toBeLessThan(24 * 1024);
      expect((await fetch(`${c.url}/livez`)).status).toBe(200);
    } finally {
      expect(await c.stop()).toBe(0);
    }
  });
});
