import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import type { Clock } from '../../clock';
import type { Logger } from '../../log/logger';
import type { ReadStandbyState } from '../../metrics/pipeline-state';
import { errorText } from '../maintenance';
import { currentReadRouteScope, type PrimaryReason, type ReadRoute } from '../read-source';
import { StorageUnavailableError } from '../storage-unavailable';
import type { ReadPages } from './read-cursor';
import type { ReadQuery } from './read-pool';
import { formatLsn, parseLsn, replayTarget } from './wal-position';

export interface ReadStandbyOptions {
  /** Reads on the standby (`SLUICE_DATABASE_READ_URL`). */
  readonly standby: ReadQuery;
  /** Reads on the primary: where a read goes when the standby cannot answer it. */
  readonly primary: ReadQuery;
  /**
   * The primary's WAL position for each check of the standby's lag. Not a read of stored data: it
   * must not wait its turn behind ingest as `primary`'s reads do (ingest-precedence.ts), or a check
   * outlasts `waitMs` while the writer is pressed and reads meant for the standby go to the primary,
   * the very load the standby takes off it. Default `primary`.
   */
  readonly primaryPosition?: ReadQuery;
  /**
   * Paged reads (read-cursor.ts) on the standby and on the primary. Default: each read whole as
   * one page, on `standby` and `primary`.
   */
  readonly standbyPages?: ReadPages;
  readonly primaryPages?: ReadPages;
  /**
   * Most replication lag at which the standby still takes reads (milliseconds); past it reads go to
   * the primary. Config default 10000 (`SLUICE_READ_STANDBY_MAX_LAG_MS`).
   */
  readonly maxLagMs: number;
  /**
   * Longest a read waits for the standby to replay this collector's last acknowledged commit
   * (milliseconds); then it reads the primary. Default 500, as the read barrier.
   */
  readonly waitMs: number;
  /** Age at which the standby's state is checked again before a read (milliseconds). Default 1000. */
  readonly checkEveryMs?: number;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Called with each read's route (metrics). */
  readonly onRoute?: (route: ReadRoute) => void;
  /** Called with each new state of the standby (metrics). */
  readonly onState?: (state: ReadStandbyState) => void;
}

const UNCHECKED: ReadStandbyState = {
  up: false,
  lagBytes: null,
  lagSeconds: null,
  replayedLsn: null,
  checkedAt: null,
  error: null,
};
/**
 * SQLSTATE 40001 on a standby: replay cancelled the read (it needed rows that replay removes, past
 * `max_standby_streaming_delay`). The standby is well: only this read goes to the primary.
 */
const RECOVERY_CONFLICT = '40001';
/** What a read decides on when the standby's check did not answer within the wait. */
const STALLED: ReadStandbyState = { ...UNCHECKED, error: 'the standby did not answer within the wait' };
/** Pause between two reads of the standby's replay position while a read waits (milliseconds). */
const REPLAY_POLL_MS = 10;
const DEFAULT_CHECK_EVERY_MS = 1000;

const STANDBY_STATE_SQL = `SELECT pg_is_in_recovery() AS recovery, pg_last_wal_replay_lsn()::text AS replayed,
  extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8 AS replay_age`;
const REPLAYED_SQL = 'SELECT pg_last_wal_replay_lsn()::text AS replayed';
const PRIMARY_LSN_SQL = 'SELECT pg_current_wal_lsn()::text AS lsn';
/** Where the primary's WAL ends after a commit: at or past the commit record's end. */
export const COMMIT_POSITION_SQL = 'SELECT pg_current_wal_insert_lsn()::text AS lsn';

/**
 * Sends reads to a streaming-replication standby and keeps read-after-ack: a read first waits
 * (at most `waitMs`) until the standby has replayed the last commit this collector acknowledged
 * (`noteCommit`). A standby that is down, promoted, more than `maxLagMs` behind, or that did not
 * replay in time sends the read to the primary instead, so no read hangs on it and none misses an
 * acknowledged event; the route and its reason go to the request's scope (a response header).
 */
export class ReadStandby {
  private state: ReadStandbyState = UNCHECKED;
  private checking: Promise<ReadStandbyState> | null = null;
  /** Replay position that holds this collector's last acknowledged commit; null before any. */
  private target: bigint | null = null;
  /** The position of a commit could not be read: reads go to the primary until the next one. */
  private targetUnknown = false;
  /**
   * Latest time at which the standby is known to have held all the primary had written: a check
   * that found it caught up, or an earlier check whose primary position it has replayed since; null
   * before one.
   */
  private caughtUpAt: number | null = null;
  /** The primary's WAL position at the last check that read it, and when; null before one. */
  private lastWritten: { readonly at: number; readonly lsn: bigint } | null = null;
  private readonly checkEveryMs: number;

  constructor(private readonly o: ReadStandbyOptions) {
    this.checkEveryMs = o.checkEveryMs ?? DEFAULT_CHECK_EVERY_MS;
  }

  /** The read query to give the read side: routes each read as the class comment says. */
  readonly query: ReadQuery = async (text, values) => {
    const scope = currentReadRouteScope();
    const route = await this.routeOf(scope);
    if (route.source === 'primary') return this.o.primary(text, values);
    try {
      return await this.o.standby(text, values);
    } catch (err) {
      this.fallBack(err, scope);
      return this.o.primary(text, values);
    }
  };

  /**
   * Paged reads, routed as `query`. A standby that fails before the first page sends the read to
   * the primary; one that fails after it fails the read (the pages handed on cannot be taken back).
   */
  readonly pages: ReadPages = async <Row extends pg.QueryResultRow>(
    text: string,
    values: unknown[],
    pageRows: number,
    onPage: (rows: Row[]) => Promise<void> | void,
  ): Promise<void> => {
    const scope = currentReadRouteScope();
    const route = await this.routeOf(scope);
    const primary = this.o.primaryPages ?? wholeAsPage(this.o.primary);
    if (route.source === 'primary') return primary(text, values, pageRows, onPage);
    let handedOn = false;
    try {
      const standby = this.o.standbyPages ?? wholeAsPage(this.o.standby);
      return await standby<Row>(text, values, pageRows, (rows) => {
        handedOn = true;
        return onPage(rows);
      });
    } catch (err) {
      if (handedOn) throw err;
      this.fallBack(err, scope);
      return primary(text, values, pageRows, onPage);
    }
  };

  private routeOf(scope: ReturnType<typeof currentReadRouteScope>): Promise<ReadRoute> {
    return scope === undefined ? this.decideCounted() : scope.decide(() => this.decideCounted());
  }

  /** A read the standby failed: rethrows what is not the standby's state, else notes the reroute. */
  private fallBack(err: unknown, scope: ReturnType<typeof currentReadRouteScope>): void {
    if (!(err instanceof StorageUnavailableError)) throw err;
    const conflict = (err.cause as { code?: unknown } | null)?.code === RECOVERY_CONFLICT;
    if (!conflict) this.markDown(err);
    const fallback: ReadRoute = {
      source: 'primary',
      reason: conflict ? 'replay_conflict' : 'standby_down',
    };
    this.o.onRoute?.(fallback);
    scope?.reroute(fallback);
  }

  /** Records the WAL insert position read right after a commit this collector acknowledges. */
  noteCommit(insertLsn: string | null): void {
    if (insertLsn === null) {
      this.targetUnknown = true;
      return;
    }
    const target = replayTarget(parseLsn(insertLsn));
    if (this.target === null || target > this.target) this.target = target;
    this.targetUnknown = false;
  }

  /** The standby as last checked. */
  current(): ReadStandbyState {
    return this.state;
  }

  /** Checks the standby now (one check at a time; callers share it). */
  check(): Promise<ReadStandbyState> {
    this.checking ??= this.checkOnce().finally(() => (this.checking = null));
    return this.checking;
  }

  private async fresh(): Promise<ReadStandbyState> {
    const at = this.state.checkedAt;
    if (at !== null && this.o.clock.now() - at < this.checkEveryMs) return this.state;
    return this.check();
  }

  private async decideCounted(): Promise<ReadRoute> {
    const route = await this.decide();
    this.o.onRoute?.(route);
    return route;
  }

  private async decide(): Promise<ReadRoute> {
    const deadline = this.o.clock.now() + this.o.waitMs;
    // A standby that accepts connections but does not answer (stopped, overloaded) is down for this
    // read: the check goes on and its answer serves the next reads.
    const state = await within(this.fresh(), this.o.waitMs, () => STALLED);
    if (!state.up) return primary('standby_down');
    if (state.lagSeconds === null || state.lagSeconds * 1000 > this.o.maxLagMs) {
      return primary('standby_lagging');
    }
    if (this.targetUnknown) return primary('commit_unknown');
    const target = this.target;
    if (target === null || (state.replayedLsn !== null && parseLsn(state.replayedLsn) >= target)) {
      return { source: 'standby', reason: null };
    }
    const waited = await within(
      this.waitForReplay(target, deadline),
      Math.max(0, deadline - this.o.clock.now()),
      // Its last answer did not come in time: not replayed, as far as this read can wait.
      () => 'not_replayed' as const,
    );
    return waited === 'replayed' ? { source: 'standby', reason: null } : primary(waited);
  }

  /** Whether the standby replays up to `target` within `waitMs`; `standby_down` when it stops answering. */
  private async waitForReplay(
    target: bigint,
    deadline: number,
  ): Promise<'replayed' | 'not_replayed' | 'standby_down'> {
    for (;;) {
      try {
        const row = (await this.o.standby<{ replayed: string | null }>(REPLAYED_SQL, [])).rows[0];
        if (row?.replayed != null && parseLsn(row.replayed) >= target) return 'replayed';
      } catch (err) {
        this.markDown(err);
        return 'standby_down';
      }
      const left = deadline - this.o.clock.now();
      if (left <= 0) return 'not_replayed';
      await delay(Math.min(REPLAY_POLL_MS, left));
    }
  }

  private markDown(err: unknown): void {
    this.setState({ ...UNCHECKED, checkedAt: this.o.clock.now(), error: errorText(err) });
  }

  private async checkOnce(): Promise<ReadStandbyState> {
    const checkedAt = this.o.clock.now();
    let row: { recovery: boolean; replayed: string | null; replay_age: number | null } | undefined;
    try {
      row = (await this.o.standby<NonNullable<typeof row>>(STANDBY_STATE_SQL, [])).rows[0];
    } catch (err) {
      return this.setState({ ...UNCHECKED, checkedAt, error: errorText(err) });
    }
    if (row === undefined || !row.recovery || row.replayed === null) {
      const error = 'SLUICE_DATABASE_READ_URL is not a standby in recovery (promoted, or not a replica)';
      return this.setState({ ...UNCHECKED, checkedAt, error });
    }
    const replayed = parseLsn(row.replayed);
    let written: bigint;
    try {
      const position = this.o.primaryPosition ?? this.o.primary;
      const lsn = (await position<{ lsn: string }>(PRIMARY_LSN_SQL, [])).rows[0]?.lsn;
      if (lsn === undefined) throw new Error('no WAL position');
      written = parseLsn(lsn);
    } catch (err) {
      const error = `lag unknown: the primary did not answer (${errorText(err)})`;
      return this.setState({
        up: true,
        lagBytes: null,
        lagSeconds: null,
        replayedLsn: row.replayed,
        checkedAt,
        error,
      });
    }
    const behind = written > replayed ? written - replayed : 0n;
    const previous = this.lastWritten;
    this.lastWritten = { at: checkedAt, lsn: written };
    if (behind === 0n) this.caughtUpAt = checkedAt;
    // The primary writes on between the two reads of a check: while it writes WAL without commits
    // (a long transaction, a vacuum) the standby is always found a little behind and the age of its
    // last replayed commit grows, though it keeps up. Having replayed what the primary had written
    // at the previous check, it is at most that check's age behind.
    else if (previous !== null && replayed >= previous.lsn) {
      this.caughtUpAt = Math.max(this.caughtUpAt ?? previous.at, previous.at);
    }
    // Behind: no more than since it last caught up, nor than the age of the last commit it replayed
    // (which alone overstates the lag after the primary was idle). Neither known: too old.
    const ages = [row.replay_age, this.caughtUpAt === null ? null : (checkedAt - this.caughtUpAt) / 1000];
    const known = ages.filter((a): a is number => a !== null);
    const lagSeconds = behind === 0n ? 0 : known.length === 0 ? null : Math.min(...known);
    return this.setState({
      up: true,
      lagBytes: Number(behind),
      lagSeconds: lagSeconds === null ? null : Math.max(0, lagSeconds),
      replayedLsn: formatLsn(replayed),
      checkedAt,
      error: null,
    });
  }

  private setState(state: ReadStandbyState): ReadStandbyState {
    if (state.up !== this.state.up && state.checkedAt !== null) {
      if (state.up) this.o.logger.info('read standby up: reads go to it');
      else this.o.logger.warn({ reason: state.error }, 'read standby down: reads go to the primary');
    }
    this.state = state;
    this.o.onState?.(state);
    return state;
  }
}

/** `work`'s result, or `late()` when it takes longer than `ms` (milliseconds). */
/** `ReadPages` of a whole read: its rows as one page. */
function wholeAsPage(query: ReadQuery): ReadPages {
  return async (text, values, _pageRows, onPage) => {
    const { rows } = await query(text, values);
    if (rows.length > 0) await onPage(rows as never[]);
  };
}

async function within<T>(work: Promise<T>, ms: number, late: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(late()), ms)));
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function primary(reason: PrimaryReason): ReadRoute {
  return { source: 'primary', reason };
}
