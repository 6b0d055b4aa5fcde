import type { AppDataDeletion, DeletedRows } from '../port';
import { floorTo, ROLLUP_TABLE, ROLLUP_WIDTH_MS } from './rollups';

/*
 * The statements of `Storage.deleteAppData`, the same on both adapters but for how metric samples
 * are stored (`SampleDeletes`); each runs them in order in one transaction, on one snapshot of the
 * database (PostgreSQL: REPEATABLE READ), then the loss map's part (delete-outcomes.ts). One
 * snapshot matters: a write committed between two statements of READ COMMITTED would keep its
 * samples (deleted by an earlier snapshot) and lose its invalidation log rows (deleted by a later
 * one), and those minutes would never be folded. Placeholders are
 * numbered (`$1` on PostgreSQL, `$p1` on SQLite), given by the dialect; a statement's `params` are
 * its parameters 1, 2, … in order.
 */

const MINUTE_MS = ROLLUP_WIDTH_MS['1m'];
const HOUR_MS = ROLLUP_WIDTH_MS['1h'];

export interface DeleteDialect {
  /** The placeholder of the n-th parameter (1-based). */
  readonly param: (n: number) => string;
  /** `INSERT INTO metric_rollup_invalidations (name, app, bucket)`, as the log's keys allow. */
  readonly logInvalidations: string;
  /** How metric samples are read and deleted; rows of `metric_samples` (`ROW_SAMPLES`) if absent. */
  readonly samples?: SampleDeletes;
}

/**
 * One statement; `counts` names the figure its row count adds to, if any, or with `countedIn` the
 * number in that column of its one row.
 */
export interface DeleteStatement {
  readonly sql: string;
  readonly params: readonly (string | number)[];
  readonly counts?: keyof DeletedRows;
  readonly countedIn?: string;
}

/**
 * The metric-sample part of the deletion, placed among the other statements; placeholders as the
 * dialect's. Each statement that counts `metricSamples` counts samples, whatever holds them.
 */
export interface SampleDeletes {
  /** A query of `name, ts` of the samples of app `p(1)` with id `p(2)`. */
  withId(p: DeleteDialect['param']): string;
  /**
   * A query of `name` (repeats allowed) of the series of app `p(1)` with samples at
   * `p(3)` <= ts < `p(4)`, where `p(3)` is an hour and `p(4)` is the deletion's `before`.
   */
  seriesBetween(p: DeleteDialect['param']): string;
  /** The statements deleting the samples `d` names: every one of the app, older, or by id. */
  statements(d: AppDataDeletion, p: DeleteDialect['param']): DeleteStatement[];
}

/** Samples as rows of the table `metric_samples`. */
export const ROW_SAMPLES: SampleDeletes = {
  withId: (p) => `SELECT name, ts FROM metric_samples WHERE app = ${p(1)} AND id = ${p(2)}`,
  seriesBetween: (p) =>
    `SELECT name FROM metric_samples WHERE app = ${p(1)} AND ts >= ${p(3)} AND ts < ${p(4)}`,
  statements(d, p) {
    if (d.scope === 'all') {
      return [
        { sql: `DELETE FROM metric_samples WHERE app = ${p(1)}`, params: [d.app], counts: 'metricSamples' },
      ];
    }
    if (d.scope === 'before') {
      return [
        {
          sql: `DELETE FROM metric_samples WHERE app = ${p(1)} AND ts < ${p(2)}`,
          params: [d.app, d.before],
          counts: 'metricSamples',
        },
      ];
    }
    return [
      {
        sql: `DELETE FROM metric_samples WHERE app = ${p(1)} AND id = ${p(2)}`,
        params: [d.app, d.id],
        counts: 'metricSamples',
      },
    ];
  },
};

export function deleteStatements(d: AppDataDeletion, dialect: DeleteDialect): DeleteStatement[] {
  const p = dialect.param;
  const samples = dialect.samples ?? ROW_SAMPLES;
  const m1 = ROLLUP_TABLE['1m'];
  const h1 = ROLLUP_TABLE['1h'];
  if (d.scope === 'all') {
    return [
      { sql: `DELETE FROM events WHERE app = ${p(1)}`, params: [d.app], counts: 'events' },
      ...samples.statements(d, p),
      { sql: `DELETE FROM ${m1} WHERE app = ${p(1)}`, params: [d.app], counts: 'rollups1m' },
      { sql: `DELETE FROM ${h1} WHERE app = ${p(1)}`, params: [d.app], counts: 'rollups1h' },
      { sql: `DELETE FROM metric_rollup_invalidations WHERE app = ${p(1)}`, params: [d.app] },
      // The loss map goes with the data it describes: delete-outcomes.ts, run after these.
    ];
  }
  if (d.scope === 'before') {
    const minute = floorTo(d.before, MINUTE_MS);
    const hour = floorTo(d.before, HOUR_MS);
    const statements: DeleteStatement[] = [];
    if (d.before !== hour) {
      // The hour holding `before` keeps data from it on: every series with data in that hour
      // before `before` gets its minute of `before` logged, which refolds that minute (from raw
      // samples) and its hour (whole, from its source) once their rows below are gone.
      statements.push({
        sql: `${dialect.logInvalidations}
          SELECT DISTINCT name, CAST(${p(1)} AS text), CAST(${p(2)} AS bigint) FROM (
            SELECT name FROM ${h1} WHERE app = ${p(1)} AND bucket = ${p(3)}
            UNION SELECT name FROM ${m1} WHERE app = ${p(1)} AND bucket >= ${p(3)} AND bucket < ${p(4)}
            UNION ${samples.seriesBetween(p)}
          ) series WHERE name IS NOT NULL`,
        params: [d.app, minute, hour, d.before],
      });
    }
    const older = (table: string, column: string, counts?: keyof DeletedRows): DeleteStatement => ({
      sql: `DELETE FROM ${table} WHERE app = ${p(1)} AND ${column} < ${p(2)}`,
      params: [d.app, d.before],
      counts,
    });
    return [
      ...statements,
      older('events', 'ts', 'events'),
      ...samples.statements(d, p),
      // A bucket starting before `before` either ends by it (all its data goes) or holds it (it
      // was logged above and is refolded from what is left).
      older(m1, 'bucket', 'rollups1m'),
      older(h1, 'bucket', 'rollups1h'),
      {
        sql: `DELETE FROM metric_rollup_invalidations WHERE app = ${p(1)} AND bucket < ${p(2)}`,
        params: [d.app, minute],
      },
      // The loss map of the minutes wholly before `before`: delete-outcomes.ts, run after these.
    ];
  }
  // One event id: its samples' buckets are refolded from the samples left. The loss map keeps
  // counting it as stored: it was.
  const bucketsOf = (width: number): string =>
    `SELECT name, CAST(${p(1)} AS text), ts - ts % ${width} FROM (${samples.withId(p)}) deleted`;
  return [
    { sql: `${dialect.logInvalidations} ${bucketsOf(MINUTE_MS)}`, params: [d.app, d.id] },
    {
      sql: `DELETE FROM ${m1} WHERE (name, app, bucket) IN (${bucketsOf(MINUTE_MS)})`,
      params: [d.app, d.id],
      counts: 'rollups1m',
    },
    {
      sql: `DELETE FROM ${h1} WHERE (name, app, bucket) IN (${bucketsOf(HOUR_MS)})`,
      params: [d.app, d.id],
      counts: 'rollups1h',
    },
    {
      sql: `DELETE FROM events WHERE app = ${p(1)} AND id = ${p(2)}`,
      params: [d.app, d.id],
      counts: 'events',
    },
    ...samples.statements(d, p),
  ];
}

/** Adds each statement's row count to its figure. */
export function tallyDeleted(
  statements: readonly DeleteStatement[],
  rowCounts: readonly number[],
  lossMapRows: number,
): DeletedRows {
  const out = { events: 0, metricSamples: 0, rollups1m: 0, rollups1h: 0, lossMapRows };
  statements.forEach((s, i) => {
    if (s.counts !== undefined) out[s.counts] += rowCounts[i] ?? 0;
  });
  return out;
}
