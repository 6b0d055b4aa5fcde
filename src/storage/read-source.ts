import { AsyncLocalStorage } from 'node:async_hooks';

/** Where a read was answered from: the read standby, or the primary. */
export type ReadSource = 'standby' | 'primary';

/**
 * Why a read went to the primary although a standby is configured: `standby_down` (unreachable or
 * not in recovery), `standby_lagging` (behind by more than `SLUICE_READ_STANDBY_MAX_LAG_MS`),
 * `not_replayed` (it had not replayed this collector's last acknowledged commit within the wait),
 * `commit_unknown` (the position of that commit could not be read), `replay_conflict` (replay on the
 * standby cancelled the read).
 */
export type PrimaryReason =
  'standby_down' | 'standby_lagging' | 'not_replayed' | 'commit_unknown' | 'replay_conflict';

export interface ReadRoute {
  readonly source: ReadSource;
  /** Null when the read went where it should (the standby). */
  readonly reason: PrimaryReason | null;
}

/**
 * One request's reads: the first read decides where they all go, so the statements of one answer
 * (a page and its totals) read the same server; `onRoute` tells the caller (a response header).
 */
export class ReadRouteScope {
  private deciding: Promise<ReadRoute> | null = null;
  private current: ReadRoute | null = null;
  constructor(private readonly onRoute: (route: ReadRoute) => void) {}

  /** The request's route: `decide` runs for its first read only, and reads started meanwhile share it. */
  decide(decide: () => Promise<ReadRoute>): Promise<ReadRoute> {
    if (this.current !== null) return Promise.resolve(this.current);
    this.deciding ??= decide().then((route) => {
      this.current ??= route;
      this.onRoute(this.current);
      return this.current;
    });
    return this.deciding;
  }

  /** The standby failed a read of this request: its later reads go where `route` says. */
  reroute(route: ReadRoute): void {
    this.current = route;
    this.onRoute(route);
  }

  /** Where the request's reads go now; null before its first read. */
  get route(): ReadRoute | null {
    return this.current;
  }
}

const scopes = new AsyncLocalStorage<ReadRouteScope>();

/** Runs `fn` with `scope` as the read route scope of everything it starts. */
export function withReadRouteScope<T>(scope: ReadRouteScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

/** The scope of the request being served; undefined outside one (a job, the command line). */
export function currentReadRouteScope(): ReadRouteScope | undefined {
  return scopes.getStore();
}
