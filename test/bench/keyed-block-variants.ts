import { columnBlockCopy, sampleKeyCopy } from './sample-blocks';
import {
  BATCH_SAMPLES,
  COLUMN_BLOCK_COLUMNS,
  dailyPartitions,
  eachBatch,
  ROW_COLUMNS,
  rowLines,
  type StorageVariant,
  triggers,
} from './storage-variants';

/**
 * Block variants that keep README's guarantee per sample: besides the blocks (one row per (app,
 * name, minute) of a batch, an array per column, lz4), each sample's key `(ts, id)` is a row of a
 * table `k`, partitioned by day, written in the same transaction before the blocks, so a sample
 * stored before fails the transaction as today's primary key does. A block key such as
 * `(bucket, first_id)` cannot do this: the SDK's resends do not always start with the same sample
 * (docs/metric-storage.md).
 */

/** The per-sample key table, partitioned by day as today's rows are. */
const KEY_TABLE = `CREATE TABLE k (ts bigint NOT NULL, id uuid NOT NULL, PRIMARY KEY (ts, id))
  PARTITION BY RANGE (ts); ${dailyPartitions('k')}`;

/**
 * The block table of the unkeyed binary variant (partitions by minute, index (name, bucket), both
 * triggers), with its key (bucket, first_id) or (`blockKey` false) without: `k` is what refuses a
 * resent sample, so the block key only names a block.
 */
function blockTable(blockKey: boolean): string {
  return `CREATE TABLE t (${COLUMN_BLOCK_COLUMNS}${blockKey ? ', PRIMARY KEY (bucket, first_id)' : ''})
  PARTITION BY RANGE (bucket); ${dailyPartitions()}
CREATE INDEX ON t (name, bucket); ${triggers('both', 'bucket', 'sum(cardinality(ids))')}`;
}

/** The samples' columns after app and name, in `COLUMN_BLOCK_COLUMNS` order. */
const SAMPLE_COLUMNS = [
  'id',
  'ts',
  'version',
  'env',
  'value',
  '"count"',
  '"min"',
  '"max"',
  '"sum"',
  'message',
  'attributes',
];

/**
 * The staging table today's COPY lines go to: temporary, so it writes no WAL, and emptied at each
 * commit. Dropped first: a temporary table outlives the schema its variant ran in.
 */
const STAGE_TABLE = `DROP TABLE IF EXISTS pg_temp.stage;
CREATE TEMP TABLE stage (${ROW_COLUMNS}) ON COMMIT DELETE ROWS;`;

const KEYS_FROM_STAGE = 'INSERT INTO k SELECT ts, id FROM stage';

/** Blocks of the staged samples, each array sorted on its own by (ts, id). */
const BLOCKS_FROM_STAGE_PER_ARRAY = `INSERT INTO t
SELECT ts - ts % 60000, (array_agg(id ORDER BY ts, id))[1], app, name, min(ts), max(ts),
  ${SAMPLE_COLUMNS.map((c) => `array_agg(${c} ORDER BY ts, id)`).join(', ')}
FROM stage GROUP BY app, name, ts - ts % 60000`;

/**
 * Blocks of the staged samples sorted once: aggregates read a sorted subquery's rows in its order
 * (PostgreSQL documents this for `array_agg`, "Aggregate Functions").
 */
const BLOCKS_FROM_STAGE_SORTED = `INSERT INTO t
SELECT bucket, (array_agg(id))[1], app, name, min(ts), max(ts),
  ${SAMPLE_COLUMNS.map((c) => `array_agg(${c})`).join(', ')}
FROM (SELECT *, ts - ts % 60000 AS bucket FROM stage ORDER BY app, name, bucket, ts, id) s
GROUP BY app, name, bucket`;

function clientBlocks(name: string, blockKey: boolean): StorageVariant {
  return {
    name,
    ddl: `${KEY_TABLE} ${blockTable(blockKey)}`,
    compression: 'lz4',
    layout: 'column blocks of a batch + sample keys',
    tables: ['t', 'k'],
    storedSamples: 'sum(cardinality(ids))',
    writes: eachBatch((samples) => ({
      copies: [
        { table: 'k', format: ' (FORMAT binary)', payload: sampleKeyCopy(samples) },
        {
          table: 't',
          format: ' (FORMAT binary)',
          payload: columnBlockCopy(samples, BATCH_SAMPLES),
        },
      ],
      statements: [],
    })),
  };
}

function serverBlocks(name: string, blocksSql: string): StorageVariant {
  return {
    name,
    ddl: `${STAGE_TABLE} ${KEY_TABLE} ${blockTable(true)}`,
    compression: 'lz4',
    layout: 'rows into stage',
    tables: ['t', 'k'],
    storedSamples: 'sum(cardinality(ids))',
    writes: eachBatch((samples) => ({
      copies: [{ table: 'stage', format: '', payload: rowLines(samples) }],
      statements: [KEYS_FROM_STAGE, blocksSql],
    })),
  };
}

/** The block table's column names, in order: what the binary COPY payload holds. */
const BLOCK_COLUMN_NAMES = COLUMN_BLOCK_COLUMNS.split(',').map((c) => c.trim().split(/\s+/)[0] as string);

/**
 * The layout of migration 12: blocks without any key, each with `seq` (a sequence's next value,
 * per block) and `merged` false, the index (name, bucket) and the partial index of unmerged blocks
 * (bucket, app, name, seq); a resent sample is merged on read and by a job, not refused.
 */
export const MERGED_BLOCK_VARIANT: StorageVariant = {
  name: 'unkeyed blocks (migration 12): blocks of a batch, binary COPY, lz4, partitions, seq, merged, index (name, bucket), partial index of unmerged blocks, both triggers',
  ddl: `${blockTable(false)}
CREATE SEQUENCE t_seq;
ALTER TABLE t ADD COLUMN seq bigint NOT NULL DEFAULT nextval('t_seq');
ALTER TABLE t ADD COLUMN merged boolean NOT NULL DEFAULT false;
CREATE INDEX ON t (bucket, app, name, seq) WHERE NOT merged;`,
  compression: 'lz4',
  layout: 'column blocks of a batch, merged on read',
  tables: ['t'],
  storedSamples: 'sum(cardinality(ids))',
  writes: eachBatch((samples) => ({
    copies: [
      {
        table: `t (${BLOCK_COLUMN_NAMES.join(', ')})`,
        format: ' (FORMAT binary)',
        payload: columnBlockCopy(samples, BATCH_SAMPLES),
      },
    ],
    statements: [],
  })),
};

/** Column blocks of a batch with a per-sample key table, built by the writer or by the server. */
export const KEYED_BLOCK_VARIANTS: readonly StorageVariant[] = [
  clientBlocks(
    'keyed blocks: key rows k (ts, id) by day, binary COPY, + blocks of a batch, an array per column, binary COPY, lz4, partitions, key, index, both triggers',
    true,
  ),
  clientBlocks('keyed blocks: the same, blocks without their key (bucket, first_id)', false),
  serverBlocks(
    'keyed blocks built by the server: today’s COPY lines into a temporary stage, INSERT k, INSERT blocks (array_agg … ORDER BY per array)',
    BLOCKS_FROM_STAGE_PER_ARRAY,
  ),
  serverBlocks(
    'keyed blocks built by the server: the same, the stage sorted once in a subquery',
    BLOCKS_FROM_STAGE_SORTED,
  ),
];
