import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  detectionWindowMs,
  drainDelayFor,
  recoveryWindowMs,
  timingProblems,
} from '../../src/dev-cluster/check-timing';
import { parseClusterArgs } from '../../src/dev-cluster/cluster-args';
import { requireProgram, searchFolders } from '../../src/dev-cluster/executables';
import {
  deriveHaproxyConfig,
  formatHaproxyTime,
  parseHaproxyTime,
  readHaproxySettings,
} from '../../src/dev-cluster/haproxy-config';
import { locateRepoFiles } from '../../src/dev-cluster/repo-files';
import { loadConfig } from '../../src/config/load';
import { TEST_TIMING } from './support/test-cluster';
import { dockerCompose, serviceBlock } from '../support/compose-file';

const files = locateRepoFiles();
const template = readFileSync(files.haproxyCfg, 'utf8');
const settings = readHaproxySettings(template);
const collectorDefaults = loadConfig({});

/** Loopback addresses of every frontend, as `sluice cluster` gives them. */
const LOOPBACK = {
  binds: {
    ingest: '127.0.0.1:18080',
    otlp: '127.0.0.1:14318',
    stats: '127.0.0.1:18404',
    exporter: '127.0.0.1:18405',
  },
};
/** Two local collectors: API and OTLP ports. */
const TWO_SERVERS = [
  { index: 1, ports: { 8080: 40001, 4318: 40002 } },
  { index: 2, ports: { 8080: 40003, 4318: 40004 } },
];

function haproxyBinary(): string {
  return requireProgram('haproxy', 'haproxy', searchFolders(process.env.PATH));
}

/** `haproxy -c` on a text: exit code and output. */
function haproxyCheck(text: string): { status: number | null; output: string } {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'sluice-hacheck-'));
  try {
    const file = path.join(folder, 'haproxy.cfg');
    writeFileSync(file, text);
    const r = spawnSync(haproxyBinary(), ['-c', '-f', file], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, SLUICE_STATS_USER: 'admin', SLUICE_STATS_PASSWORD: 'admin' },
    });
    return { status: r.status, output: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

describe('haproxy.cfg and the collector settings', () => {
  it('reads the check timing, keep-alive timeout and servers of haproxy.cfg', () => {
    expect(settings.timing).toEqual({
      interMs: 1000,
      fastinterMs: 500,
      downinterMs: 1000,
      fall: 2,
      rise: 2,
      timeoutCheckMs: 1000,
    });
    expect(settings.httpKeepAliveMs).toBe(10_000);
    expect(settings.serverTemplates).toEqual([
      {
        backend: 'collectors',
        prefix: 'collector',
        count: 20,
        host: 'collector',
        port: 8080,
        params: ['init-addr', 'none'],
      },
      {
        backend: 'collectors-otlp',
        prefix: 'collector',
        count: 20,
        host: 'collector',
        port: 4318,
        params: ['port', '8080', 'init-addr', 'none'],
      },
    ]);
    expect(settings.frontends).toEqual(['ingest', 'otlp', 'stats', 'exporter']);
  });

  it('drains longer than HAProxy needs to notice, with the default SLUICE_DRAIN_DELAY_MS', () => {
    // The arithmetic written in haproxy.cfg: 1000 + (2 - 1) x 500 + 1000 = 2500 ms; plus the margin, 3000.
    expect(detectionWindowMs(settings.timing)).toBe(2500);
    expect(drainDelayFor(settings.timing)).toBe(3000);
    expect(collectorDefaults.drainDelayMs).toBeGreaterThanOrEqual(drainDelayFor(settings.timing));
    expect(recoveryWindowMs(settings.timing)).toBe(2500);
  });

  it('keeps HAProxy’s idle keep-alive below the collector’s keepAliveTimeout', () => {
    expect(settings.httpKeepAliveMs).toBeLessThan(collectorDefaults.keepAliveTimeoutMs);
    expect(timingProblems(settings.timing, settings.httpKeepAliveMs, collectorDefaults)).toEqual([]);
  });

  it('names what is wrong when the collector settings do not fit', () => {
    const problems = timingProblems(settings.timing, settings.httpKeepAliveMs, {
      drainDelayMs: 1000,
      keepAliveTimeoutMs: 5000,
    });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /SLUICE_DRAIN_DELAY_MS=1000 is shorter than HAProxy's detection window .* 2500 ms/,
    );
    expect(problems[1]).toMatch(
      /SLUICE_KEEP_ALIVE_TIMEOUT_MS=5000 must be above HAProxy's timeout http-keep-alive/,
    );
  });

  it('gives the tests a shorter timing from the same formula', () => {
    expect(drainDelayFor(TEST_TIMING)).toBe(detectionWindowMs(TEST_TIMING) + 500);
    expect(
      timingProblems(TEST_TIMING, 1500, {
        drainDelayMs: drainDelayFor(TEST_TIMING),
        keepAliveTimeoutMs: 2000,
      }),
    ).toEqual([]);
  });

  it('passes haproxy -c as written', () => {
    const r = haproxyCheck(template);
    expect({ status: r.status, valid: /Configuration file is valid/.test(r.output) }).toEqual({
      status: 0,
      valid: true,
    });
  });

  it('renders a loopback config in which only addresses differ, and haproxy -c passes on it', () => {
    const derived = deriveHaproxyConfig(template, { ...LOOPBACK, servers: TWO_SERVERS });
    const before = new Set(template.split('\n'));
    const after = new Set(derived.split('\n'));
    const removed = [...before].filter((l) => !after.has(l)).map((l) => l.trim());
    const added = [...after].filter((l) => !before.has(l)).map((l) => l.trim());
    expect(removed).toEqual([
      'bind :8080',
      'server-template collector 20 collector:8080 init-addr none',
      'bind :4318',
      'server-template collector 20 collector:4318 port 8080 init-addr none',
      'bind :8404',
      'bind :8405',
    ]);
    expect(added).toEqual([
      expect.stringMatching(/^# Rendered by `sluice cluster` from haproxy.cfg/),
      'bind 127.0.0.1:18080',
      'server collector1 127.0.0.1:40001 init-addr none',
      'server collector2 127.0.0.1:40003 init-addr none',
      'bind 127.0.0.1:14318',
      'server collector1 127.0.0.1:40002 port 40001 init-addr none',
      'server collector2 127.0.0.1:40004 port 40003 init-addr none',
      'bind 127.0.0.1:18404',
      'bind 127.0.0.1:18405',
    ]);
    expect(readHaproxySettings(derived).timing).toEqual(settings.timing);
    const r = haproxyCheck(derived);
    expect({ status: r.status, output: r.output }).toEqual({
      status: 0,
      output: expect.stringContaining('valid'),
    });
  });

  it('refuses more local collectors than the server templates make', () => {
    const servers = Array.from({ length: 21 }, (_, i) => ({
      index: i + 1,
      ports: { 8080: 41000 + 2 * i, 4318: 41001 + 2 * i },
    }));
    expect(() => deriveHaproxyConfig(template, { ...LOOPBACK, servers })).toThrow(
      /server-template makes at most 20 servers \(asked for 21\)/,
    );
  });

  it('rewrites only the check timing and keep-alive lines for tests', () => {
    const derived = deriveHaproxyConfig(template, {
      ...LOOPBACK,
      servers: TWO_SERVERS.slice(0, 1),
      timing: TEST_TIMING,
      httpKeepAliveMs: 1500,
    });
    const read = readHaproxySettings(derived);
    expect(read.timing).toEqual(TEST_TIMING);
    expect(read.httpKeepAliveMs).toBe(1500);
    expect(derived).toContain(
      'default-server check inter 250ms fastinter 100ms downinter 250ms fall 2 rise 2 maxconn 256 resolvers docker',
    );
    expect(haproxyCheck(derived).status).toBe(0);
  });

  it('refuses a template without the sections it relies on', () => {
    const broken = template.replace(/^backend collectors$/m, 'backend others');
    expect(() => deriveHaproxyConfig(broken, { ...LOOPBACK, servers: TWO_SERVERS })).toThrow(
      /no "backend collectors" section/,
    );
  });

  it('reads and writes HAProxy times', () => {
    expect(parseHaproxyTime('500ms')).toBe(500);
    expect(parseHaproxyTime('2s')).toBe(2000);
    expect(parseHaproxyTime('1m')).toBe(60_000);
    expect(parseHaproxyTime('250')).toBe(250);
    expect(() => parseHaproxyTime('2 s')).toThrow(/not an HAProxy time/);
    expect(formatHaproxyTime(1500)).toBe('1500ms');
    expect(formatHaproxyTime(2000)).toBe('2s');
  });
});

describe('docker-compose.yml, deploy/ and haproxy.cfg agree', () => {
  /** `docker-compose config` with the defaults a user gets (each run takes seconds: read once). */
  let defaultConfig = '';
  beforeAll(() => {
    const r = dockerCompose(['config']);
    if (r.status !== 0) throw new Error(`docker-compose config failed:\n${r.stderr}`);
    defaultConfig = r.stdout;
  });

  it('is valid (docker-compose config -q)', () => {
    const r = dockerCompose(['config', '-q']);
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  });

  it('runs the collectors as one scalable service that HAProxy and Prometheus find through DNS', () => {
    const services = dockerCompose(['config', '--services']).stdout.split('\n').filter(Boolean);
    expect(services).toEqual(
      expect.arrayContaining(['haproxy', 'collector', 'postgres', 'redis', 'prometheus', 'grafana']),
    );
    expect(services.filter((s) => /^collector\d+$/.test(s))).toEqual([]);

    const collector = serviceBlock(defaultConfig, 'collector');
    expect(collector).toMatch(/\n {4}deploy:\n {6}replicas: 3\n/);
    expect(collector).not.toMatch(/container_name|\n {4}ports:/);
    const apiPort = /SLUICE_PORT: '(\d+)'/.exec(collector)?.[1];
    const otlpPort = /SLUICE_OTLP_PORT: '(\d+)'/.exec(collector)?.[1];

    // HAProxy: every server template points at the service name and the port the collectors use.
    const byBackend = Object.fromEntries(settings.serverTemplates.map((t) => [t.backend, t]));
    expect(byBackend.collectors).toMatchObject({ host: 'collector', port: Number(apiPort) });
    expect(byBackend['collectors-otlp']).toMatchObject({ host: 'collector', port: Number(otlpPort) });
    expect(byBackend['collectors-otlp']?.params.join(' ')).toContain(`port ${apiPort}`);

    // Prometheus: the same DNS name and port.
    const prometheus = readFileSync(path.join(files.root, 'deploy/prometheus/prometheus.yml'), 'utf8');
    expect(prometheus).toMatch(
      new RegExp(
        `job_name: sluice\\n[^-]*dns_sd_configs:\\n\\s+- names: \\['collector'\\]\\n\\s+type: A\\n\\s+port: ${apiPort}\\n`,
      ),
    );
    expect(prometheus).not.toMatch(/collector\d/);
  });

  it('keeps SLUICE_EXPECTED_INSTANCES settable when scaling', () => {
    const scaled = dockerCompose(['config'], { SLUICE_EXPECTED_INSTANCES: '5' });
    expect(serviceBlock(scaled.stdout, 'collector')).toContain("SLUICE_EXPECTED_INSTANCES: '5'");
    expect(serviceBlock(defaultConfig, 'collector')).toContain("SLUICE_EXPECTED_INSTANCES: '3'");
  });

  it('publishes the API, OTLP and stats ports, not the exporter, and passes the stats credentials', () => {
    const haproxy = serviceBlock(
      dockerCompose(['config'], { SLUICE_STATS_PASSWORD: 's3cret' }).stdout,
      'haproxy',
    );
    for (const port of [8080, 4318, 8404]) expect(haproxy).toContain(`published: ${port}`);
    expect(haproxy).not.toContain('8405');
    expect(haproxy).toContain('SLUICE_STATS_PASSWORD: s3cret');
    expect(settings.frontends).toEqual(['ingest', 'otlp', 'stats', 'exporter']);
  });

  it('provisions a dashboard whose queries use the collector and HAProxy metric names', () => {
    const dashboard = JSON.parse(
      readFileSync(path.join(files.root, 'deploy/grafana/dashboards/sluice.json'), 'utf8'),
    ) as {
      panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
    };
    const exprs = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join('\n');
    for (const metric of [
      'sluice_events_accepted_total',
      'sluice_events_throttled_total',
      'sluice_lane_depth_events',
      'sluice_flush_duration_seconds_bucket',
      'sluice_scheduler_runs_total',
      'sluice_ratelimit_fallback_active',
      'haproxy_backend_http_responses_total',
      'sluice_queue_stream_bytes',
      'sluice_queue_consumer_pending_messages',
      'sluice_queue_publish_duration_seconds_bucket',
      'sluice_queue_publish_refused_total',
      'sluice_queue_stream_replicas_current',
    ]) {
      expect(exprs).toContain(metric);
    }
  });
});

describe('runner helpers', () => {
  it('says which apt package installs a missing program', () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), 'sluice-nobin-'));
    try {
      expect(() => requireProgram('haproxy', 'haproxy', [empty])).toThrow(
        /haproxy is not installed .*apt-get install -y haproxy/,
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('parses sluice cluster flags', () => {
    expect(parseClusterArgs([])).toEqual({
      collectors: 3,
      port: 8080,
      statsPort: 8404,
      otlpPort: 4318,
      exporterPort: 8405,
    });
    expect(
      parseClusterArgs(['--collectors', '5', '--port=9000', '--stats-port', '0', '--otlp-port=0']),
    ).toEqual({ collectors: 5, port: 9000, statsPort: 0, otlpPort: 0, exporterPort: 8405 });
    // As many as haproxy.cfg's server templates make.
    expect(parseClusterArgs(['--collectors', '20']).collectors).toBe(20);
    expect(() => parseClusterArgs(['--collectors', '21'])).toThrow(
      /--collectors needs an integer from 1 to 20/,
    );
    expect(() => parseClusterArgs(['--replicas', '3'])).toThrow(/unknown option --replicas/);
    expect(() => parseClusterArgs(['--port'])).toThrow(/--port needs a value/);
    expect(() => parseClusterArgs(['3'])).toThrow(/unknown option "3"/);
  });
});
