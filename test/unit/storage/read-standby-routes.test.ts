import type pg from 'pg';
import { createLogger } from '../../../src/log/logger';
import { ReadStandby } from '../../../src/storage/postgres/read-standby';
import type { ReadPages } from '../../../src/storage/postgres/read-cursor';
import type { ReadQuery } from '../../../src/storage/postgres/read-pool';
import { ReadRouteScope, withReadRouteScope, type ReadRoute } from '../../../src/storage/read-source';
import { StorageUnavailableError } from '../../../src/storage/storage-unavailable';

/**
 * The routing rules of the read standby, each on its own: the integration test
 * (test/integration/read-standby.test.ts) covers them on a real standby, where a replay conflict
 * or a failed WAL position read cannot be made on demand.
 */
function result<Row extends pg.QueryResultRow>(rows: Row[]): pg.QueryResult<Row> {
  return { rows, rowCount: rows.length, command: 'SELECT', oid: 0, fields: [] };
}

/** A standby replayed to `replayed`, a primary written to `written`; `fail` makes the next data read fail. */
function servers(o: { replayed: string; written: string }) {
  const calls = { standby: 0, primary: 0 };
  let fail: Error | null = null;
  const standby: ReadQuery = async <Row extends pg.QueryResultRow>(text: string) => {
    if (text.includes('pg_is_in_recovery')) {
      return result([{ recovery: true, replayed: o.replayed, replay_age: 0.1 }] as unknown as Row[]);
    }
    if (text.includes('pg_last_wal_replay_lsn'))
      return result([{ replayed: o.replayed }] as unknown as Row[]);
    calls.standby++;
    if (fail !== null) {
      const err = fail;
      fail = null;
      throw err;
    }
    return result([{ from: 'standby' }] as unknown as Row[]);
  };
  const primary: ReadQuery = async <Row extends pg.QueryResultRow>(text: string) => {
    if (text.includes('pg_current_wal_lsn')) return result([{ lsn: o.written }] as unknown as Row[]);
    calls.primary++;
    return result([{ from: 'primary' }] as unknown as Row[]);
  };
  return { standby, primary, calls, failNext: (err: Error) => (fail = err) };
}

function standbyOf(s: ReturnType<typeof servers>): ReadStandby {
  return new ReadStandby({
    standby: s.standby,
    primary: s.primary,
    maxLagMs: 10_000,
    waitMs: 50,
    clock: { now: () => Date.now() },
    logger: createLogger('silent'),
  });
}

async function readIn(standby: ReadStandby): Promise<{ from: unknown; route: ReadRoute | null }> {
  const scope = new ReadRouteScope(() => undefined);
  const answer = await withReadRouteScope(scope, () => standby.query('SELECT 1', []));
  return { from: answer.rows[0]?.from, route: scope.route };
}

describe('read standby routes', () => {
  it('checks the lag by a WAL position read that does not wait behind the primary’s held reads', async () => {
    // The primary's reads wait their turn behind ingest (ingest-precedence.ts): here, until released.
    const s = servers({ replayed: '0/3000', written: '0/3000' });
    let release = (): void => undefined;
    const held = new Promise<void>((go) => (release = go));
    const gated: ReadQuery = async (text, values) => {
      await held;
      return s.primary(text, values);
    };
    /** A read's route once decided, and the read. */
    const readWith = async (primaryPosition?: ReadQuery) => {
      const standby = new ReadStandby({
        standby: s.standby,
        primary: gated,
        ...(primaryPosition !== undefined && { primaryPosition }),
        maxLagMs: 10_000,
        waitMs: 50,
        clock: { now: () => Date.now() },
        logger: createLogger('silent'),
      });
      standby.noteCommit('0/3000');
      let decided = (_: ReadRoute): void => undefined;
      const routed = new Promise<ReadRoute>((go) => (decided = go));
      const scope = new ReadRouteScope((r) => decided(r));
      const read = withReadRouteScope(scope, () => standby.query('SELECT 1', []));
      return { route: await routed, read };
    };
    const beside = await readWith(s.primary);
    expect(beside.route).toEqual({ source: 'standby', reason: null });
    expect((await beside.read).rows[0]?.from).toBe('standby');
    // Checked through the held reads, the check outlasts the wait: the read goes to the primary.
    const behind = await readWith();
    expect(behind.route).toEqual({ source: 'primary', reason: 'standby_down' });
    release();
    expect((await behind.read).rows[0]?.from).toBe('primary');
  });

  it('reads the standby once it has replayed the last commit, the primary when it has not', async () => {
    const s = servers({ replayed: '0/3000', written: '0/3000' });
    const standby = standbyOf(s);
    standby.noteCommit('0/3000');
    expect(await readIn(standby)).toEqual({ from: 'standby', route: { source: 'standby', reason: null } });
    standby.noteCommit('0/3100');
    expect(await readIn(standby)).toEqual({
      from: 'primary',
      route: { source: 'primary', reason: 'not_replayed' },
    });
  });

  it('the reads of one request share one decision, even when they start together', async () => {
    const s = servers({ replayed: '0/3000', written: '0/3100' });
    const routes: ReadRoute[] = [];
    const standby = new ReadStandby({
      standby: s.standby,
      primary: s.primary,
      maxLagMs: 10_000,
      waitMs: 50,
      clock: { now: () => Date.now() },
      logger: createLogger('silent'),
      onRoute: (r) => routes.push(r),
    });
    standby.noteCommit('0/3100');
    const heard: ReadRoute[] = [];
    const scope = new ReadRouteScope((r) => heard.push(r));
    const answers = await withReadRouteScope(scope, () =>
      Promise.all([standby.query('SELECT 1', []), standby.query('SELECT 2', [])]),
    );
    expect(answers.map((a) => a.rows[0]?.from)).toEqual(['primary', 'primary']);
    expect(routes).toEqual([{ source: 'primary', reason: 'not_replayed' }]);
    expect(heard).toEqual([{ source: 'primary', reason: 'not_replayed' }]);
  });

  it('a replay conflict sends that read to the primary and keeps the standby for the next', async () => {
    const s = servers({ replayed: '0/3000', written: '0/3000' });
    const standby = standbyOf(s);
    const conflict = Object.assign(new Error('canceling statement due to conflict with recovery'), {
      code: '40001',
    });
    s.failNext(new StorageUnavailableError('PostgreSQL cannot serve reads now', { cause: conflict }));
    expect(await readIn(standby)).toEqual({
      from: 'primary',
      route: { source: 'primary', reason: 'replay_conflict' },
    });
    expect(standby.current().up).toBe(true);
    expect((await readIn(standby)).from).toBe('standby');
  });

  it('a standby that fails a read is down: this read and the next go to the primary', async () => {
    const s = servers({ replayed: '0/3000', written: '0/3000' });
    const standby = standbyOf(s);
    s.failNext(new StorageUnavailableError('connection refused', { cause: new Error('ECONNREFUSED') }));
    expect(await readIn(standby)).toEqual({
      from: 'primary',
      route: { source: 'primary', reason: 'standby_down' },
    });
    expect(standby.current().up).toBe(false);
    expect((await readIn(standby)).route).toEqual({ source: 'primary', reason: 'standby_down' });
  });

  it('a commit whose WAL position could not be read sends reads to the primary until the next commit', async () => {
    const s = servers({ replayed: '0/3000', written: '0/3000' });
    const standby = standbyOf(s);
    standby.noteCommit(null);
    expect((await readIn(standby)).route).toEqual({ source: 'primary', reason: 'commit_unknown' });
    standby.noteCommit('0/2000');
    expect((await readIn(standby)).route).toEqual({ source: 'standby', reason: null });
  });

  /**
   * A primary that writes WAL on and on without a commit (a long transaction, a vacuum): each read
   * of its position finds it 0x100 further on, and the standby replays to where the primary was at
   * its last read (`keepsUp`) or stays where it is. The last commit it replayed is a minute old.
   */
  function writingPrimary(keepsUp: boolean) {
    let position = 0x3000;
    let replayed = 0x3000;
    const lsn = (n: number): string => `0/${n.toString(16).toUpperCase()}`;
    const standby: ReadQuery = async <Row extends pg.QueryResultRow>(text: string) => {
      if (keepsUp) replayed = position;
      if (text.includes('pg_is_in_recovery')) {
        return result([{ recovery: true, replayed: lsn(replayed), replay_age: 60 }] as unknown as Row[]);
      }
      return result([{ replayed: lsn(replayed), from: 'standby' }] as unknown as Row[]);
    };
    const primary: ReadQuery = async <Row extends pg.QueryResultRow>(text: string) => {
      if (text.includes('pg_current_wal_lsn')) {
        position += 0x100;
        return result([{ lsn: lsn(position) }] as unknown as Row[]);
      }
      return result([{ from: 'primary' }] as unknown as Row[]);
    };
    let now = 0;
    const standbyReads = new ReadStandby({
      standby,
      primary,
      maxLagMs: 10_000,
      waitMs: 50,
      clock: { now: () => now },
      logger: createLogger('silent'),
    });
    return { standby: standbyReads, tick: (ms: number) => (now += ms) };
  }

  it('a standby that keeps up with a primary writing without commits is not lagging', async () => {
    const p = writingPrimary(true);
    // The first check knows only the age of the last replayed commit.
    expect((await readIn(p.standby)).route).toEqual({ source: 'primary', reason: 'standby_lagging' });
    for (let s = 0; s < 30; s++) {
      p.tick(1000);
      expect((await readIn(p.standby)).route).toEqual({ source: 'standby', reason: null });
      expect(p.standby.current().lagSeconds).toBeLessThanOrEqual(1);
    }
  });

  it('a standby that does not replay while the primary writes stays lagging', async () => {
    const p = writingPrimary(false);
    const lagging: boolean[] = [];
    for (let s = 0; s < 30; s++) {
      p.tick(1000);
      lagging.push((await readIn(p.standby)).route?.reason === 'standby_lagging');
    }
    expect(lagging.every((x) => x)).toBe(true);
  });
});

describe('paged reads through the standby', () => {
  /** Paged reads of two pages: the standby's fail before the first or after it, as asked. */
  function pagedServers(failAt: 'first page' | 'second page') {
    const s = servers({ replayed: '0/3000', written: '0/3000' });
    const pages =
      (from: string, fails: boolean): ReadPages =>
      async <Row extends pg.QueryResultRow>(
        _text: string,
        _values: unknown[],
        _pageRows: number,
        onPage: (rows: Row[]) => Promise<void> | void,
      ) => {
        const down = new StorageUnavailableError('the standby went away', { cause: new Error('reset') });
        if (fails && failAt === 'first page') throw down;
        await onPage([{ from, page: 1 }] as unknown as Row[]);
        if (fails) throw down;
        await onPage([{ from, page: 2 }] as unknown as Row[]);
      };
    const standby = new ReadStandby({
      standby: s.standby,
      primary: s.primary,
      standbyPages: pages('standby', true),
      primaryPages: pages('primary', false),
      maxLagMs: 10_000,
      waitMs: 50,
      clock: { now: () => Date.now() },
      logger: createLogger('silent'),
    });
    standby.noteCommit('0/3000');
    return standby;
  }

  async function pagesIn(standby: ReadStandby): Promise<{ rows: unknown[]; route: ReadRoute | null }> {
    const scope = new ReadRouteScope(() => undefined);
    const rows: unknown[] = [];
    await withReadRouteScope(scope, () =>
      standby.pages('SELECT 1', [], 1, (page) => {
        rows.push(...page);
      }),
    );
    return { rows, route: scope.route };
  }

  it('a standby failing before the first page sends the read to the primary, whole', async () => {
    expect(await pagesIn(pagedServers('first page'))).toEqual({
      rows: [
        { from: 'primary', page: 1 },
        { from: 'primary', page: 2 },
      ],
      route: { source: 'primary', reason: 'standby_down' },
    });
  });

  it('a standby failing after a page was handed on fails the read: no page is handed on twice', async () => {
    await expect(pagesIn(pagedServers('second page'))).rejects.toBeInstanceOf(StorageUnavailableError);
  });
});
