import { createHash } from 'node:crypto';
import type { TelemetryEvent } from '../../src/events/types';
import { encodeAttributes } from '../../src/storage/layout/rows';
import { MERGED_BLOCK_VARIANT } from './keyed-block-variants';
import { columnBlockCopy } from './sample-blocks';
import { seriesIds } from './series-row-variants';
import {
  BATCH_SAMPLES,
  COLUMN_BLOCK_COLUMNS,
  type StorageVariant,
  type StorageWorkload,
  type TransactionWrites,
} from './storage-variants';

/*
 * Migration 12's blocks with a series dictionary (issue 45, item 3): a block's attributes array
 * becomes an array of series ids (bigint), each id a row of `metric_series (id, app, name,
 * attributes)` that PostgreSQL numbers. The writer would keep a cache of the series it knows;
 * a batch's series the cache does not know are inserted in the same transaction, before the
 * blocks, by one `INSERT … ON CONFLICT DO NOTHING RETURNING id`, and the blocks are COPYed with
 * the ids. The identity is unique per (app, name, SHA-256 of the attributes): the attributes
 * themselves (up to 32 × 1 KiB) do not fit a btree entry, and a digest no client can collide keeps
 * one app's samples from ever naming another's series.
 */

/** A series' key in the variant's maps: app, name and canonical attributes. */
const seriesKey = (e: TelemetryEvent): string =>
  `${e.app}\u0000${e.name}\u0000${encodeAttributes(e.attributes)}`;

const SERIES_TABLE = `CREATE TABLE metric_series (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  app text NOT NULL, name text NOT NULL, attributes text NOT NULL, digest bytea NOT NULL,
  UNIQUE (app, name, digest));`;

/** The block columns with the series ids where the attributes were. */
const SERIES_BLOCK_COLUMNS = COLUMN_BLOCK_COLUMNS.replace(
  'attributes text[] NOT NULL',
  'series bigint[] NOT NULL',
);
const SERIES_BLOCK_COLUMN_NAMES = SERIES_BLOCK_COLUMNS.split(',').map(
  (c) => c.trim().split(/\s+/)[0] as string,
);

/** Migration 12's block table (the `MERGED_BLOCK_VARIANT`'s), series ids for attributes. */
const SERIES_BLOCK_TABLE = MERGED_BLOCK_VARIANT.ddl.replace(COLUMN_BLOCK_COLUMNS, SERIES_BLOCK_COLUMNS);

/** An element of a text array literal, quoted. */
const element = (s: string): string => `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"`;
/** A string as an SQL literal (standard_conforming_strings on). */
const literal = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const textArray = (items: readonly string[]): string =>
  `${literal(`{${items.map(element).join(',')}}`)}::text[]`;

/**
 * The statement that writes `fresh` series (in order: PostgreSQL numbers them so) and returns their
 * ids, as the writer would send it with the series as array parameters.
 */
export function insertSeries(fresh: readonly TelemetryEvent[]): string {
  const attributes = fresh.map((e) => encodeAttributes(e.attributes));
  const digests = attributes.map((a) => createHash('sha256').update(a, 'utf8').digest('hex'));
  return `INSERT INTO metric_series (app, name, attributes, digest)
SELECT app, name, attributes, decode(digest, 'hex')
FROM unnest(${textArray(fresh.map((e) => e.app))}, ${textArray(fresh.map((e) => e.name))},
  ${textArray(attributes)}, ${textArray(digests)}) AS s (app, name, attributes, digest)
ON CONFLICT DO NOTHING RETURNING id`;
}

/**
 * Every sample of the blocks whose series id names a series of the block's app and name: equal to
 * the samples written only when each id went to the series it was meant for.
 */
const STORED_SAMPLES = `sum(cardinality(ids)) - (SELECT count(*) FROM t b CROSS JOIN LATERAL unnest(b.series) AS s (id)
  LEFT JOIN metric_series m ON m.id = s.id AND m.app = b.app AND m.name = b.name WHERE m.id IS NULL)`;

/**
 * Series blocks of a workload whose series are written with them (`known` false: each batch first
 * inserts the series no batch before it wrote; bytes include `metric_series`), or were all written
 * before the clock started (`known`: a writer whose cache knows every series, as after a day of
 * the same traffic; bytes are the blocks' alone).
 */
export function seriesBlocks(name: string, workload: StorageWorkload, known: boolean): StorageVariant {
  const writes = (batches: readonly (readonly TelemetryEvent[])[]): TransactionWrites[] => {
    const ids = seriesIds(batches.flat());
    const idOf = (e: TelemetryEvent): number => ids.get(seriesKey(e)) as number;
    const written = new Set<number>();
    return batches.map((samples) => {
      const fresh: TelemetryEvent[] = [];
      for (const e of samples) {
        const id = idOf(e);
        if (known || written.has(id)) continue;
        written.add(id);
        fresh.push(e);
      }
      return {
        before: fresh.length > 0 ? [insertSeries(fresh)] : [],
        copies: [
          {
            table: `t (${SERIES_BLOCK_COLUMN_NAMES.join(', ')})`,
            format: ' (FORMAT binary)',
            payload: columnBlockCopy(samples, BATCH_SAMPLES, idOf),
          },
        ],
        statements: [],
      };
    });
  };
  const variant: StorageVariant = {
    name,
    workload,
    ddl: `${SERIES_TABLE} ${SERIES_BLOCK_TABLE}`,
    compression: 'lz4',
    layout: known ? 'series blocks, series known' : 'series blocks, series written with them',
    tables: known ? ['t'] : ['t', 'metric_series'],
    storedSamples: STORED_SAMPLES,
    writes,
  };
  if (!known) return variant;
  return {
    ...variant,
    setup: (samples) => {
      const first = new Map<string, TelemetryEvent>();
      for (const e of samples) if (!first.has(seriesKey(e))) first.set(seriesKey(e), e);
      return { before: [insertSeries([...first.values()])], copies: [], statements: [] };
    },
  };
}

const TODAY = 'unkeyed blocks (migration 12)';
const SERIES = 'series blocks: migration 12’s blocks, series ids (bigint) for attributes';

/**
 * Today's blocks against blocks with a series dictionary, on the bench workload (46,000 series in
 * 140,000 samples) and on the influx suite's tags-only points (144 series).
 */
export const SERIES_BLOCK_VARIANTS: readonly StorageVariant[] = [
  seriesBlocks(`${SERIES}, new series inserted with them (bench workload)`, 'bench', false),
  seriesBlocks(`${SERIES}, every series known (bench workload; bytes: the blocks alone)`, 'bench', true),
  { ...MERGED_BLOCK_VARIANT, name: `${TODAY} (tags-only points)`, workload: 'tags-only' },
  seriesBlocks(`${SERIES}, new series inserted with them (tags-only points)`, 'tags-only', false),
  seriesBlocks(
    `${SERIES}, every series known (tags-only points; bytes: the blocks alone)`,
    'tags-only',
    true,
  ),
];
