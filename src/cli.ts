#!/usr/bin/env node
/**
 * The composition root: the only module that reads the environment,
 * constructs components and wires them together.
 *   sluice serve     run a collector
 *   sluice worker    drain the JetStream stream into PostgreSQL (tier 4)
 *   sluice migrate   apply storage migrations and exit
 *   sluice tail | query | delete | key | cluster | help   (src/commands/help.ts lists them all)
 * `serve` and `worker` run with the memory flags of src/runtime/memory-flags.ts: when Node was
 * started without them, the command is relaunched with them before anything else is loaded (the
 * components are imported on demand, so the relaunching parent stays small).
 */
import { ConfigError, loadConfig, type Config } from './config/load';
import { generateKey } from './auth/api-keys';
import { endQuietlyWhenReaderLeaves } from './commands/closed-pipe';
import { UsageError } from './config/flags';
import { COMMANDS, commandHelp, generalHelp, isCommand, type CommandName } from './commands/help';
import { closestName } from './config/unknown-variables';
import { drainWhenLauncherExits } from './runtime/launcher-watch';
import { relaunchWithMemoryFlags } from './runtime/relaunch';

/** `sluice key ingest <id> <app>` / `sluice key read <id>`: a new secret and its keys-file entry. */
function printNewKey(args: readonly string[]): void {
  const [kind, id, app] = args;
  if ((kind !== 'ingest' && kind !== 'read') || !id || (kind === 'ingest' && !app)) {
    process.stderr.write(commandHelp('key'));
    process.exit(2);
  }
  const { secret, entry } = generateKey(kind, id, kind === 'ingest' ? app : undefined);
  process.stdout.write(
    `secret (give to the client; not stored anywhere): ${secret}\n` +
      `keys-file entry (add to "keys" in SLUICE_AUTH_KEYS_FILE): ${JSON.stringify(entry)}\n`,
  );
  if (kind === 'ingest') process.stdout.write(`${sentryDsnLine(id)}\n`);
}

/** The Sentry DSN of an ingest key (docs/sentry.md): its id is the DSN's public key. */
function sentryDsnLine(id: string): string {
  // Sentry SDKs parse a DSN's key as \w+: an id with '.' or '-' cannot be one.
  return /^\w+$/.test(id)
    ? `Sentry DSN (set your collector's address): http://${id}@localhost:8080/1`
    : `no Sentry DSN: Sentry SDKs take only letters, digits and _ in a DSN key; make a key whose id is such to send from one`;
}

function loadConfigOrExit(args: readonly string[]): Config {
  try {
    return loadConfig(process.env, args);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`sluice: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/** The command and its arguments; `serve` when the first argument is an option or absent. */
function commandOf(argv: readonly string[]): { command: string; args: readonly string[] } {
  const [first, ...rest] = argv;
  if (first === undefined || (first.startsWith('--') && first !== '--help'))
    return { command: 'serve', args: argv };
  return { command: first, args: rest };
}

/** `sluice help [command]`, `sluice -h`, `sluice --help`, `sluice <command> --help|-h`: printed, true. */
function printedHelp(command: string, args: readonly string[]): boolean {
  if (command === '-h' || command === '--help') {
    process.stdout.write(generalHelp());
    return true;
  }
  if (command === 'help') {
    const [topic] = args;
    if (topic === undefined) process.stdout.write(generalHelp());
    else if (isCommand(topic)) process.stdout.write(commandHelp(topic));
    else unknownCommand(topic);
    return true;
  }
  if (isCommand(command) && (args.includes('--help') || args.includes('-h'))) {
    // `sluice serve --help` shows the commands too: serve is what `sluice --help` describes.
    process.stdout.write(command === 'serve' && args.length === 1 ? generalHelp() : commandHelp(command));
    return true;
  }
  return false;
}

function unknownCommand(command: string): never {
  const closest = closestName(command, Object.keys(COMMANDS));
  process.stderr.write(
    `sluice: unknown command "${command}"${closest === null ? '' : `; did you mean ${closest}?`} ` +
      '(sluice help lists the commands)\n',
  );
  process.exit(2);
}

/** Runs a command that is no long-lived process; a `UsageError` prints the command's help. */
async function runTool(command: CommandName, run: () => Promise<void>): Promise<void> {
  endQuietlyWhenReaderLeaves(process.stdout, (code) => process.exit(code));
  try {
    await run();
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`sluice ${command}: ${err.message}\n\n${commandHelp(command)}`);
      process.exit(2);
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`sluice: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`sluice ${command}: ${(err as Error).message}\n`);
    process.exit(1);
  }
}

async function main(argv: readonly string[]): Promise<void> {
  const { command, args } = commandOf(argv);
  if (printedHelp(command, args)) return;
  if (!isCommand(command)) unknownCommand(command);
  if (command === 'key') {
    printNewKey(args);
    return;
  }
  // Long-running commands stop as on SIGTERM when npm, which launched them, is gone.
  if (command === 'serve' || command === 'worker' || command === 'cluster' || command === 'tail') {
    drainWhenLauncherExits(process.env);
  }
  if (command === 'cluster') {
    const { runClusterCommand } = await import('./dev-cluster');
    await runClusterCommand(args, process.env).catch((err: unknown) => {
      process.stderr.write(`sluice cluster: ${(err as Error).message}\n`);
      process.exit(1);
    });
    return;
  }
  if (command === 'tail') {
    await runTool(command, async () => {
      const { parseTailArgs } = await import('./commands/tail-args');
      const { runTail } = await import('./commands/tail');
      const tailArgs = parseTailArgs(args, process.env);
      const stop = new AbortController();
      for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, () => stop.abort());
      await runTail(tailArgs, (line) => process.stdout.write(`${line}\n`), stop.signal);
    });
    return;
  }
  if (command === 'query') {
    await runTool(command, async () => {
      const { parseQueryArgs } = await import('./commands/query-args');
      const { runQuery } = await import('./commands/query');
      await runQuery(parseQueryArgs(args, process.env), (text) => process.stdout.write(`${text}\n`));
    });
    return;
  }
  if (command === 'delete') {
    await runTool(command, async () => {
      const { parseDeleteArgs } = await import('./commands/delete-args');
      const { runDelete } = await import('./commands/delete');
      const { openStorage } = await import('./compose/storage');
      const { createLogger } = await import('./log/logger');
      const deleteArgs = parseDeleteArgs(args);
      const config = loadConfig(process.env, deleteArgs.settingsArgs);
      const storage = openStorage(config, createLogger(config.logLevel));
      try {
        process.exitCode = await runDelete(deleteArgs, storage, {
          where: config.databaseUrl === null ? `SQLite ${config.sqlitePath}` : 'PostgreSQL',
          input: process.stdin,
          say: (text) => process.stderr.write(text),
          print: (text) => process.stdout.write(text),
        });
      } finally {
        await storage.close();
      }
    });
    return;
  }
  if (command !== 'serve' && command !== 'worker' && command !== 'migrate') unknownCommand(command);
  const config = loadConfigOrExit(args);
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
    const { runMigrate } = await import('./commands/migrate');
    const { runServe } = await import('./commands/serve');
    const { runWorker } = await import('./commands/worker');
    const run = { migrate: runMigrate, worker: runWorker, serve: runServe }[command];
    await run(config, logger);
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
