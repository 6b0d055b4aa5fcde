/**
 * The help of every `sluice` command: `sluice help [command]`, `sluice <command> --help` or `-h`.
 * The options of `serve`, `worker` and `migrate` are settings (src/config); the other commands
 * declare their own flags beside their code.
 */
import { settingsHelp } from '../config/load';
import { SETTINGS } from '../config/settings';
import { CLUSTER_USAGE } from '../dev-cluster/cluster-args';
import { DELETE_USAGE } from './delete-args';
import { QUERY_USAGE } from './query-args';
import { TAIL_USAGE } from './tail-args';

type SettingKey = keyof typeof SETTINGS;

/** What `sluice worker` reads: the queue, the database and its writer, the process itself. */
const WORKER_SETTINGS: readonly SettingKey[] = [
  'databaseUrl',
  'natsUrl',
  'natsStream',
  'natsSubjectPrefix',
  'natsReplicas',
  'natsMaxBytes',
  'natsMaxAgeMs',
  'natsDuplicateWindowMs',
  'natsDeadLetterMaxAgeMs',
  'natsPublishTimeoutMs',
  'workerBatchSize',
  'workerFetchExpiresMs',
  'workerAckWaitMs',
  'workerMaxAckPending',
  'workerMaxDeliveries',
  'workerPort',
  'writeConcurrency',
  'storageTimeoutMs',
  'healthIntervalMs',
  'scheduler',
  'shutdownTimeoutMs',
  'logLevel',
];

/** What `sluice migrate` and `sluice delete` read: which storage, and how long to wait for it. */
export const STORAGE_SETTINGS: readonly SettingKey[] = [
  'databaseUrl',
  'sqlitePath',
  'storageTimeoutMs',
  'partitionsAheadDays',
  'logLevel',
];

export const COMMANDS = {
  serve: 'run a collector (the default command; SLUICE_MODE=ingest publishes to NATS JetStream)',
  worker: 'drain the JetStream stream into PostgreSQL (tier 4)',
  migrate: 'apply storage migrations, then exit',
  cluster: 'N collectors behind a real HAProxy on loopback (docs/cluster.md)',
  tail: "follow an app's new events through the read API",
  query: 'read events, metrics, apps, metric names or error groups through the read API',
  delete: "delete an app's data (or one event) from storage, rollups and loss map included",
  key: 'make an API key',
  help: 'show the help of sluice or of one command',
} as const;

export type CommandName = keyof typeof COMMANDS;

export function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}

const SETTINGS_NOTE = `Every option is an environment variable or the flag shown beside it; flags win.
Durations take ms, s, m, h, d, w; sizes KiB, MiB, GiB (powers of 1024) or KB, MB, GB (of 1000).
A SLUICE_* variable that is not one of these stops the process (docs/configuration.md).`;

function commandList(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return Object.entries(COMMANDS)
    .map(([name, summary]) => `  ${name.padEnd(width)}  ${summary}`)
    .join('\n');
}

/** `sluice`, `sluice help`, `sluice -h`: the commands, then the options of `serve` (the default). */
export function generalHelp(): string {
  return `Usage: sluice [command] [--option value ...]

Commands:
${commandList()}

\`sluice help <command>\` or \`sluice <command> --help\` shows a command's own options.
No configuration at all: port 8080, SQLite file ./data/sluice.db (tier 1).

Options of sluice serve:
${SETTINGS_NOTE}

${settingsHelp()}
`;
}

/** The help of one command. */
export function commandHelp(command: CommandName): string {
  switch (command) {
    case 'serve':
      return `Usage: sluice serve [--option value ...]

Runs a collector: POST /v1/events, the read API, the console at /, OTLP/HTTP on SLUICE_OTLP_PORT.
SIGTERM or SIGINT drains it: nothing acknowledged is lost (docs/operations.md).
${SETTINGS_NOTE}

${settingsHelp()}
`;
    case 'worker':
      return `Usage: sluice worker [--option value ...]

Drains the JetStream stream that collectors in SLUICE_MODE=ingest publish to into PostgreSQL
(tier 4, docs/cluster.md). Needs SLUICE_NATS_URL and SLUICE_DATABASE_URL. SIGTERM or SIGINT
drains it. It takes every option of sluice serve (sluice help serve); these are its own:

${settingsHelp(WORKER_SETTINGS)}
`;
    case 'migrate':
      return `Usage: sluice migrate [--option value ...]

Applies the storage migrations and exits (sluice serve and worker also apply them at start, under
an advisory lock). Options:

${settingsHelp(STORAGE_SETTINGS)}
`;
    case 'cluster':
      return CLUSTER_USAGE;
    case 'tail':
      return TAIL_USAGE;
    case 'query':
      return QUERY_USAGE;
    case 'delete':
      return `${DELETE_USAGE}
Storage options:

${settingsHelp(STORAGE_SETTINGS)}
`;
    case 'key':
      return `Usage: sluice key ingest <id> <app>
       sluice key read <id>

Makes an API key: prints a new secret (give it to the client; it is stored nowhere) and the entry
to add to "keys" in SLUICE_AUTH_KEYS_FILE. An ingest key sends events as <app>; a read key reads
(docs/operations.md, "API keys"). For an ingest key whose <id> is letters, digits and _, it also
prints the Sentry DSN of the key (docs/sentry.md).
`;
    case 'help':
      return `Usage: sluice help [command]

Commands:
${commandList()}
`;
  }
}
