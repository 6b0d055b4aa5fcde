#!/usr/bin/env node
/**
 * The composition root: the only module that reads the environment,
 * constructs components and wires them together.
 *   sluice serve     run a collector
 *   sluice worker    drain the JetStream stream into PostgreSQL (tier 4)
 *   sluice migrate   apply storage migrations and exit
 * `serve` and `worker` run with the memory flags of src/runtime/memory-flags.ts: when Node was
 * started without them, the command is relaunched with them before anything else is loaded (the
 * components are imported on demand, so the relaunching parent stays small).
 */
import { ConfigError, helpText, loadConfig, type Config } from './config/load';
import { generateKey } from './auth/api-keys';
import { relaunchWithMemoryFlags } from './runtime/relaunch';
const USAGE = `Usage: sluice <command> [--option value ...]

Commands:
  serve     run a collector (default; SLUICE_MODE=ingest publishes to NATS JetStream)
  worker    drain the JetStream stream into PostgreSQL (needs SLUICE_NATS_URL, SLUICE_DATABASE_URL)
  migrate   apply storage migrations, then exit
  key       make an API key: sluice key ingest <id> <app> | sluice key read <id>
  cluster   N collectors behind a real HAProxy on loopback (see docs/cluster.md)
  help      show this text

Every option is an environment variable or the flag shown beside it; flags win.
No configuration at all: port 8080, SQLite file ./data/sluice.db (tier 1).

Options:
${helpText()}
`;

/** `sluice key ingest <id> <app>` / `sluice key read <id>`: a new secret and its keys-file entry. */
function printNewKey(args: readonly string[]): void {
  const [kind, id, app] = args;
  if ((kind !== 'ingest' && kind !== 'read') || !id || (kind === 'ingest' && !app)) {
    process.stderr.write('usage: sluice key ingest <id> <app> | sluice key read <id>\n');
    process.exit(2);
  }
  const { secret, entry } = generateKey(kind, id, kind === 'ingest' ? app : undefined);
  process.stdout.write(
    `secret (give to the client; not stored anywhere): ${secret}\n` +
      `keys-file entry (add to "keys" in SLUICE_AUTH_KEYS_FILE): ${JSON.stringify(entry)}\n`,
  );
}

async function main(argv: readonly string[]): Promise<void> {
  const [first, ...rest] = argv;
  const command = first === undefined || first.startsWith('--') ? 'serve' : first;
  const args = first === undefined || first.startsWith('--') ? argv : rest;
  if (command === 'help' || args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return;
  }
  if (command === 'key') {
    printNewKey(args);
    return;
  }
  if (command === 'cluster') {
    const { runClusterCommand } = await import('./cluster');
    await runClusterCommand(args, process.env).catch((err: unknown) => {
      process.stderr.write(`sluice cluster: ${(err as Error).message}\n`);
      process.exit(1);
    });
    return;
  }
  if (command !== 'serve' && command !== 'worker' && command !== 'migrate') {
    process.stderr.write(`sluice: unknown command "${command}"\n\n${USAGE}`);
    process.exit(2);
  }
  let config: Config;
  try {
    config = loadConfig(process.env, args);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`sluice: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  // Settings are checked first: a bad value is reported once, by this process.
  if (
    command !== 'migrate' &&
    relaunchWithMemoryFlags({
      execPath: process.execPath,
      execArgv: process.execArgv,
      argv: process.argv.slice(1),
      env: process.env,
    })
  ) {
    return;
  }
  const { createLogger } = await import('./log/logger');
  const logger = createLogger(config.logLevel);
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception');
    logger.flush?.();
    process.exit(1);
  });
  try {
    if (command === 'migrate') {
      const { migrateStorage } = await import('./compose/storage');
      await migrateStorage(config, logger);
    } else if (command === 'worker') {
      const { startWorker } = await import('./compose/worker');
      const worker = await startWorker(config, { logger });
      process.on('SIGTERM', () => worker.shutdown('SIGTERM'));
      process.on('SIGINT', () => worker.shutdown('SIGINT'));
    } else {
      const { startCollector } = await import('./compose/collector');
      const collector = await startCollector(config, { logger });
      process.on('SIGTERM', () => collector.shutdown('SIGTERM'));
      process.on('SIGINT', () => collector.shutdown('SIGINT'));
    }
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`sluice: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    logger.fatal({ err }, `${command} failed`);
    logger.flush?.();
    process.stderr.write(`sluice: ${command} failed: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

void main(process.argv.slice(2));
