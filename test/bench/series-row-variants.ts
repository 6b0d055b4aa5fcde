import type { TelemetryEvent } from '../../src/events/types';
import { encodeAttributes } from '../../src/storage/layout/rows';
import { copyText } from './copy-text';
import {
  afterInsert,
  dailyPartitions,
  type StorageVariant,
  TRIGGER_TABLES,
  type TransactionWrites,
} from './storage-variants';

/**
 * The narrow alternative to blocks: one row a sample with today's key `(ts, id)`, but app, name
 * and attributes moved to a table of series, the row holding the series' id. The writer knows
 * the ids of the series it has written (a cache), so a sample costs a lookup on the client, and a
 * new series one row of `series` in the same transaction before the rows.
 */

/** A series: app, name and the canonical attributes JSON. */
const seriesKey = (e: TelemetryEvent): string =>
  `${e.app}\u0000${e.name}\u0000${encodeAttributes(e.attributes)}`;

/** Ids of the series of `samples`, 1, 2, … in the order each is first seen. */
export function seriesIds(samples: readonly TelemetryEvent[]): Map<string, number> {
  const ids = new Map<string, number>();
  for (const e of samples) {
    const key = seriesKey(e);
    if (!ids.has(key)) ids.set(key, ids.size + 1);
  }
  return ids;
}

const SERIES_TABLE = `CREATE TABLE series (series_id int PRIMARY KEY, app text NOT NULL, name text NOT NULL,
  attributes text NOT NULL, UNIQUE (app, name, attributes));`;

/** Today's `metric_samples` columns without app, name and attributes, with the series' id. */
const NARROW_COLUMNS = `id uuid NOT NULL, ts bigint NOT NULL, series_id int NOT NULL, version text, env text,
  value double precision, count bigint, min double precision, max double precision,
  sum double precision, message text`;

/**
 * The inserted rows per (series, minute) with their count, and each series' app and name looked up
 * by its key. `OFFSET 0` keeps the lookup a nested loop over `series`' primary key: joined as a
 * plain table, the planner (which has no statistics of a transition table) hashes all of `series`
 * on every statement, a cost that grows with the series ever written.
 */
const PER_SERIES_MINUTE = `(SELECT series_id, ts - ts % 60000 AS bucket, count(*) AS n FROM inserted GROUP BY 1, 2) i
  CROSS JOIN LATERAL (SELECT app, name FROM series s WHERE s.series_id = i.series_id OFFSET 0) s`;

/**
 * The narrow rows: key (ts, id), index (series_id, ts), daily partitions, and today's two
 * triggers, which log (name, app, minute) and count per (app, minute) through `series`.
 */
const NARROW_TABLE = `CREATE TABLE t (${NARROW_COLUMNS}, PRIMARY KEY (ts, id)) PARTITION BY RANGE (ts);
${dailyPartitions()}
CREATE INDEX ON t (series_id, ts); ${TRIGGER_TABLES}
${afterInsert('t_invalidations', 'log_invalidations', `INSERT INTO invalidations SELECT DISTINCT name, app, bucket FROM ${PER_SERIES_MINUTE}`)}
${afterInsert('t_outcomes', 'count_stored', `INSERT INTO outcomes SELECT app, bucket, 'metric', 'stored', '', '', sum(n) FROM ${PER_SERIES_MINUTE} GROUP BY 1, 2`)}`;

function seriesCopy(rows: readonly (readonly [number, TelemetryEvent])[]): Buffer {
  return Buffer.from(copyText(rows.map(([id, e]) => [id, e.app, e.name, encodeAttributes(e.attributes)])));
}

function narrowCopy(samples: readonly TelemetryEvent[], ids: ReadonlyMap<string, number>): Buffer {
  return Buffer.from(
    copyText(
      samples.map((e) => [
        e.id,
        e.ts,
        ids.get(seriesKey(e)),
        e.version,
        e.env,
        e.value,
        e.summary?.count ?? null,
        e.summary?.min ?? null,
        e.summary?.max ?? null,
        e.summary?.sum ?? null,
        e.message,
      ]),
    ),
  );
}

/**
 * Narrow rows whose series are written with them (`known` false: each batch first COPYs the
 * series no batch before it wrote; bytes include `series`), or were all written before the clock
 * started (`known`: a writer whose series all exist, as after a day of the same traffic; bytes
 * are the rows' alone).
 */
function narrowRows(name: string, known: boolean): StorageVariant {
  const writes = (batches: readonly (readonly TelemetryEvent[])[]): TransactionWrites[] => {
    const ids = seriesIds(batches.flat());
    const written = new Set<number>();
    return batches.map((samples) => {
      const fresh: [number, TelemetryEvent][] = [];
      for (const e of samples) {
        const id = ids.get(seriesKey(e)) as number;
        if (known || written.has(id)) continue;
        written.add(id);
        fresh.push([id, e]);
      }
      return {
        copies: [
          ...(fresh.length > 0 ? [{ table: 'series', format: '' as const, payload: seriesCopy(fresh) }] : []),
          { table: 't', format: '' as const, payload: narrowCopy(samples, ids) },
        ],
        statements: [],
      };
    });
  };
  const base = {
    name,
    ddl: `${SERIES_TABLE} ${NARROW_TABLE}`,
    compression: 'pglz' as const,
    layout: known ? 'narrow rows, series known' : 'narrow rows, series written with them',
    tables: known ? ['t'] : ['t', 'series'],
    storedSamples: 'count(*)',
    writes,
  };
  if (!known) return base;
  return {
    ...base,
    setup: (samples) => {
      const first = new Map<number, TelemetryEvent>();
      const ids = seriesIds(samples);
      for (const e of samples) {
        const id = ids.get(seriesKey(e)) as number;
        if (!first.has(id)) first.set(id, e);
      }
      return { copies: [{ table: 'series', format: '', payload: seriesCopy([...first]) }], statements: [] };
    },
  };
}

/** Narrow rows keyed per sample, with app, name and attributes in a table of series. */
export const SERIES_ROW_VARIANTS: readonly StorageVariant[] = [
  narrowRows(
    'narrow rows: key (ts, id), index (series_id, ts), partitions, both triggers; app, name, attributes in series, new series COPYed with the rows',
    false,
  ),
  narrowRows('narrow rows: the same, every series written before (bytes: the rows alone)', true),
];
