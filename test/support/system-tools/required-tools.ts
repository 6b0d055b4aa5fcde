import { existsSync } from 'node:fs';
import { findProgram, searchFolders } from '../../../src/dev-cluster/executables';

/** A program some tests run for real, and the Debian package that installs it. */
export interface SystemTool {
  /** Program name as the tests call it. */
  readonly name: string;
  /** Debian package that installs it. */
  readonly debianPackage: string;
  /** Which tests need it (shown when it is missing). */
  readonly neededBy: string;
  /** Full path of the installed program, or null. */
  locate(envPath: string | undefined): string | null;
}

/** Debian's Python, which the Sentry Python SDK tests run. */
export const PYTHON = '/usr/bin/python3';
/** Where `python3-sentry-sdk` installs the module. */
const PYTHON_SENTRY_SDK = '/usr/lib/python3/dist-packages/sentry_sdk/__init__.py';

function onPath(name: string): (envPath: string | undefined) => string | null {
  return (envPath) => findProgram(name, searchFolders(envPath));
}

/**
 * Every program `npm test` needs besides Node and the services (PostgreSQL, Redis, NATS, which
 * the jest global setup checks). Chromium is looked for where Debian installs it, the path the
 * browser test launches.
 */
export const REQUIRED_TOOLS: readonly SystemTool[] = [
  {
    name: 'haproxy',
    debianPackage: 'haproxy',
    neededBy: 'cluster tests (a real HAProxy in front of the collectors)',
    locate: onPath('haproxy'),
  },
  {
    name: 'prometheus',
    debianPackage: 'prometheus',
    neededBy: 'cluster test scraping the collectors',
    locate: onPath('prometheus'),
  },
  {
    name: 'promtool',
    debianPackage: 'prometheus',
    neededBy: 'checks and unit tests of the alert rules (deploy/prometheus/)',
    locate: onPath('promtool'),
  },
  {
    name: 'chromium',
    debianPackage: 'chromium',
    neededBy: 'SDK test in a headless browser (/usr/bin/chromium)',
    locate: () => findProgram('chromium', ['/usr/bin']),
  },
  {
    name: 'nats-server',
    debianPackage: 'nats-server',
    neededBy: 'queue tests that run their own NATS servers and JetStream clusters (never the shared one)',
    // Where Debian installs it (not on every user's PATH) or anywhere on PATH.
    locate: (envPath) => findProgram('nats-server', [...searchFolders(envPath), '/usr/sbin']),
  },
  {
    name: 'docker-compose',
    debianPackage: 'docker-compose',
    neededBy: 'test validating docker-compose.yml (docker-compose config)',
    locate: onPath('docker-compose'),
  },
  {
    name: 'python3-sentry-sdk',
    debianPackage: 'python3-sentry-sdk',
    neededBy: "Sentry endpoint tests with Sentry's Python SDK (Debian's /usr/bin/python3)",
    // Debian's Python and the package's module, not a virtualenv's or pyenv's python3 on PATH.
    locate: () => (existsSync(PYTHON_SENTRY_SDK) ? PYTHON : null),
  },
];

/** The tools of `tools` not installed under `envPath`. */
export function missingTools(tools: readonly SystemTool[], envPath: string | undefined): SystemTool[] {
  return tools.filter((t) => t.locate(envPath) === null);
}
