/**
 * `@sluice/sdk/node`: the Node extras of the SDK, file persistence and exit
 * hooks, on top of the core (re-exported, so Node code imports one module).
 * Everything of the core comes through `../index`, the core's public entry:
 * the build keeps that import, so this entry's bundle shares the core's file
 * instead of carrying a copy of it.
 */
import { createClient, type Client, type ClientOptions } from '../index';
import { installExitHooks, type ExitHookOptions } from './exit-hooks';
import { fileStore } from './file-store';

export * from '../index';
export { fileStore } from './file-store';
export { installExitHooks, type ExitHookOptions } from './exit-hooks';

export interface NodeClientOptions extends ClientOptions {
  /** Saves the buffer to this JSON file (see `fileStore`), unless `persistence` is given. Default: none. */
  readonly persistPath?: string;
  /** Flush on `beforeExit` and close on SIGTERM/SIGINT (see `installExitHooks`); `false` for none. Default: on. */
  readonly exitHooks?: ExitHookOptions | false;
}

/** `createClient` with Node's file persistence and exit hooks. Never throws. */
export function createNodeClient(options: NodeClientOptions): Client {
  let persistence = options.persistence;
  try {
    if (persistence === undefined && typeof options.persistPath === 'string')
      persistence = fileStore(options.persistPath);
  } catch {
    // no persistence rather than a throw into the host
  }
  const client = createClient({ ...options, persistence });
  if (options.exitHooks !== false) {
    try {
      const remove = installExitHooks(client, options.exitHooks || {});
      const close = client.close.bind(client);
      return {
        ...bindAll(client),
        close: (o) => {
          remove();
          return close(o);
        },
      };
    } catch {
      return client;
    }
  }
  return client;
}

function bindAll(client: Client): Client {
  return {
    error: client.error.bind(client),
    lifecycle: client.lifecycle.bind(client),
    metric: client.metric.bind(client),
    log: client.log.bind(client),
    flush: client.flush.bind(client),
    close: client.close.bind(client),
    stats: client.stats.bind(client),
  };
}
