import type { TelemetryEvent } from '../../src/events/types';
import { METRIC_SAMPLES } from '../../src/storage/layout/columns';
import { toMetricSampleRow } from '../../src/storage/layout/rows';
import { copyText } from './copy-text';
import { columnBlockCopy, compositeBlockLines } from './sample-blocks';

/** One `COPY … FROM STDIN` of a transaction. */
export interface CopyStep {
  /** The table COPYed into. */
  readonly table: string;
  /** `COPY` options: text (empty) or binary. */
  readonly format: '' | ' (FORMAT binary)';
  /** What the COPY reads. */
  readonly payload: Buffer;
}

/**
 * What one transaction of samples writes: its statements `before` (none when absent), its COPYs in
 * order, then its statements, then COMMIT.
 */
export interface TransactionWrites {
  readonly before?: readonly string[];
  readonly copies: readonly CopyStep[];
  readonly statements: readonly string[];
}

/**
 * The samples a variant writes: the bench workload's metric samples (5 names, random attributes),
 * or the `influx` suite's tags-only points (one name, route and browser: 144 series).
 */
export type StorageWorkload = 'bench' | 'tags-only';

/**
 * Ways of storing metric samples in PostgreSQL, each a set of tables made by `ddl` in an empty
 * schema (`t`, with its partitions, indexes and triggers, and the tables some variants add: the
 * per-sample key table `k`, a table of series), and what each transaction writes for a batch of
 * samples. Row variants take one row a sample (the columns and COPY lines of `metric_samples` before migration 9);
 * block variants one row per (app, name, minute) of a group of samples, the samples as an array
 * of a composite type (text COPY) or as one array per column (binary COPY).
 */
export interface StorageVariant {
  readonly name: string;
  /** The samples it writes; the bench workload's when absent. */
  readonly workload?: StorageWorkload;
  readonly ddl: string;
  /** How large values are compressed (`default_toast_compression` of the writing session). */
  readonly compression: 'lz4' | 'pglz';
  /** Names what `writes` returns: variants with the same layout write the same payloads. */
  readonly layout: string;
  /** The tables whose size (partitions, indexes and TOAST included) is the variant's bytes on disk. */
  readonly tables: readonly string[];
  /** An SQL expression over `t`'s rows: how many samples they hold (a check that all arrived). */
  readonly storedSamples: string;
  /**
   * What each transaction writes, one per batch of samples, the batches written in this order
   * (a variant may write a batch according to what the batches before it wrote).
   */
  writes(batches: readonly (readonly TelemetryEvent[])[]): TransactionWrites[];
  /** What is written once after `ddl`, before the clock starts, for all the samples (none when absent). */
  setup?(samples: readonly TelemetryEvent[]): TransactionWrites;
}

/** `writes` of a variant that writes each batch on its own. */
export const eachBatch =
  (write: (samples: readonly TelemetryEvent[]) => TransactionWrites) =>
  (batches: readonly (readonly TelemetryEvent[])[]): TransactionWrites[] =>
    batches.map(write);

/** A transaction of one COPY into `t` and nothing else (the row and unkeyed block variants). */
function copyIntoT(format: CopyStep['format'], payload: Buffer): TransactionWrites {
  return { copies: [{ table: 't', format, payload }], statements: [] };
}

/** Today's `metric_samples` columns (migration 001). */
export const ROW_COLUMNS = `id uuid NOT NULL, ts bigint NOT NULL, app text NOT NULL, name text NOT NULL, version text,
  env text, value double precision, count bigint, min double precision, max double precision,
  sum double precision, message text, attributes text NOT NULL`;

/**
 * Daily partitions of `table` (default `t`): a default one, and the days around now (as
 * `ensurePartitions` makes them).
 */
export function dailyPartitions(table = 't'): string {
  const day = 86_400_000;
  const today = Math.floor(Date.now() / day) * day;
  return `CREATE TABLE ${table}_default PARTITION OF ${table} DEFAULT;
CREATE TABLE ${table}_yesterday PARTITION OF ${table} FOR VALUES FROM (${today - day}) TO (${today});
CREATE TABLE ${table}_today PARTITION OF ${table} FOR VALUES FROM (${today}) TO (${today + day});
CREATE TABLE ${table}_tomorrow PARTITION OF ${table} FOR VALUES FROM (${today + day}) TO (${today + 2 * day});`;
}

const INVALIDATIONS_TABLE = `CREATE TABLE invalidations (name text NOT NULL, app text NOT NULL, bucket bigint NOT NULL);`;
const OUTCOMES_TABLE = `CREATE TABLE outcomes (app text NOT NULL, minute bigint NOT NULL, type text NOT NULL,
  outcome text NOT NULL, reason text NOT NULL, origin text NOT NULL, count bigint NOT NULL);
CREATE INDEX ON outcomes (app, minute);
CREATE INDEX ON outcomes (minute);`;

/** The tables the two triggers write: the rollup invalidation log and the loss map's counts. */
export const TRIGGER_TABLES = `${INVALIDATIONS_TABLE} ${OUTCOMES_TABLE}`;

/**
 * A statement-level trigger `trigger` on `t`'s inserts, its function `fn` running `body`, SQL over
 * the transition table `inserted`. Triggers fire in the order of their names.
 */
export function afterInsert(trigger: string, fn: string, body: string): string {
  return `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN ${body}; RETURN NULL; END $fn$;
CREATE TRIGGER ${trigger} AFTER INSERT ON t REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION ${fn}();`;
}

/**
 * The two statement-level triggers of today's schema (migrations 003 and 005), over `t`'s rows:
 * the invalidation log gets each (name, app, minute) inserted, the loss map a stored count per
 * (app, minute).
 */
export function triggers(which: 'invalidation' | 'both', bucket: string, samples: string): string {
  const invalidation = `${INVALIDATIONS_TABLE}
${afterInsert('t_invalidations', 'log_invalidations', `INSERT INTO invalidations SELECT DISTINCT name, app, ${bucket} FROM inserted`)}`;
  if (which === 'invalidation') return invalidation;
  return `${invalidation} ${OUTCOMES_TABLE}
${afterInsert('t_outcomes', 'count_stored', `INSERT INTO outcomes SELECT app, ${bucket}, 'metric', 'stored', '', '', ${samples} FROM inserted GROUP BY 1, 2`)}`;
}

/** COPY text of `samples` in `METRIC_SAMPLES` column order: the lines of a table of rows. */
export const rowLines = (samples: readonly TelemetryEvent[]): Buffer =>
  Buffer.from(
    copyText(
      samples.map((e) => {
        const row = toMetricSampleRow(e);
        return METRIC_SAMPLES.columns.map((c) => row[c.name]);
      }),
    ),
    'utf8',
  );

function rowVariant(name: string, ddl: string): StorageVariant {
  return {
    name,
    ddl,
    compression: 'pglz',
    layout: 'rows',
    tables: ['t'],
    storedSamples: 'count(*)',
    writes: eachBatch((samples) => copyIntoT('', rowLines(samples))),
  };
}

const ROW_TRIGGERS = (which: 'invalidation' | 'both'): string =>
  triggers(which, 'ts - ts % 60000', 'count(*)');

/** The per-sample row variants, each adding one thing to the one before, then an alternative key. */
export const ROW_VARIANTS: readonly StorageVariant[] = [
  rowVariant('rows: heap only', `CREATE TABLE t (${ROW_COLUMNS});`),
  rowVariant('rows: + primary key (ts, id)', `CREATE TABLE t (${ROW_COLUMNS}, PRIMARY KEY (ts, id));`),
  rowVariant(
    'rows: + index (name, ts)',
    `CREATE TABLE t (${ROW_COLUMNS}, PRIMARY KEY (ts, id)); CREATE INDEX ON t (name, ts);`,
  ),
  rowVariant(
    'rows: + daily partitions',
    `CREATE TABLE t (${ROW_COLUMNS}, PRIMARY KEY (ts, id)) PARTITION BY RANGE (ts); ${dailyPartitions()}
CREATE INDEX ON t (name, ts);`,
  ),
  rowVariant(
    'rows: + rollup invalidation trigger',
    `CREATE TABLE t (${ROW_COLUMNS}, PRIMARY KEY (ts, id)) PARTITION BY RANGE (ts); ${dailyPartitions()}
CREATE INDEX ON t (name, ts); ${ROW_TRIGGERS('invalidation')}`,
  ),
  rowVariant(
    'rows: + outcome-count trigger (the rows before migration 9)',
    `CREATE TABLE t (${ROW_COLUMNS}, PRIMARY KEY (ts, id)) PARTITION BY RANGE (ts); ${dailyPartitions()}
CREATE INDEX ON t (name, ts); ${ROW_TRIGGERS('both')}`,
  ),
  rowVariant(
    'rows: primary key (name, ts, id) + BRIN (ts), partitions, no triggers',
    `CREATE TABLE t (${ROW_COLUMNS}, PRIMARY KEY (name, ts, id)) PARTITION BY RANGE (ts); ${dailyPartitions()}
CREATE INDEX ON t USING brin (ts);`,
  ),
  rowVariant(
    'rows: primary key (name, ts, id) + BRIN (ts), partitions, both triggers',
    `CREATE TABLE t (${ROW_COLUMNS}, PRIMARY KEY (name, ts, id)) PARTITION BY RANGE (ts); ${dailyPartitions()}
CREATE INDEX ON t USING brin (ts); ${ROW_TRIGGERS('both')}`,
  ),
];

/** A sample inside a block: the row's columns but app and name (the block's). */
const SAMPLE_TYPE = `CREATE TYPE sample AS (id uuid, ts bigint, version text, env text, value double precision,
  count bigint, min double precision, max double precision, sum double precision, message text, attributes text);`;

const BLOCK_KEYS = `bucket bigint NOT NULL, first_id uuid NOT NULL, app text NOT NULL, name text NOT NULL,
  ts_min bigint NOT NULL, ts_max bigint NOT NULL`;
/** Blocks as one array of the composite type `sample`. */
const COMPOSITE_BLOCK_COLUMNS = `${BLOCK_KEYS}, samples sample[] NOT NULL`;
/** Blocks as one array per column of the samples, in `columnBlockCopy`'s order. */
export const COLUMN_BLOCK_COLUMNS = `${BLOCK_KEYS}, ids uuid[] NOT NULL, ts bigint[] NOT NULL, version text[],
  env text[], value double precision[], count bigint[], min double precision[], max double precision[],
  sum double precision[], message text[], attributes text[] NOT NULL`;

/** Samples of one request (100 events, 70 % metric samples) and of one collector batch (2,000 events). */
export const REQUEST_SAMPLES = 70;
export const BATCH_SAMPLES = 1_400;

interface BlockForm {
  readonly columns: string;
  /** Samples in a block row, for the outcome-count trigger and the stored-samples check. */
  readonly cardinality: string;
  readonly types: string;
  readonly layout: string;
  readonly write: (samples: readonly TelemetryEvent[]) => TransactionWrites;
}

const composite = (groupSize: number): BlockForm => ({
  columns: COMPOSITE_BLOCK_COLUMNS,
  cardinality: 'sum(cardinality(samples))',
  types: SAMPLE_TYPE,
  layout: `composite blocks of ${groupSize}`,
  write: (samples) => copyIntoT('', compositeBlockLines(samples, groupSize)),
});

const columns = (groupSize: number): BlockForm => ({
  columns: COLUMN_BLOCK_COLUMNS,
  cardinality: 'sum(cardinality(ids))',
  types: '',
  layout: `column blocks of ${groupSize}`,
  write: (samples) => copyIntoT(' (FORMAT binary)', columnBlockCopy(samples, groupSize)),
});

/**
 * A block table: heap only, or (`full`) partitioned by the minute with the key (bucket, first_id),
 * an index (name, bucket) and both triggers.
 */
function blockVariant(
  name: string,
  form: BlockForm,
  compression: 'lz4' | 'pglz',
  full: boolean,
): StorageVariant {
  const table = full
    ? `CREATE TABLE t (${form.columns}, PRIMARY KEY (bucket, first_id)) PARTITION BY RANGE (bucket);
${dailyPartitions()}
CREATE INDEX ON t (name, bucket); ${triggers('both', 'bucket', form.cardinality)}`
    : `CREATE TABLE t (${form.columns});`;
  return {
    name,
    ddl: `${form.types} ${table}`,
    compression,
    layout: form.layout,
    tables: ['t'],
    storedSamples: form.cardinality,
    writes: eachBatch(form.write),
  };
}

/** Blocks of a batch's samples per (app, name, minute), and of a request's. */
export const BLOCK_VARIANTS: readonly StorageVariant[] = [
  blockVariant(
    'blocks of a batch per (app, name, minute), sample[], text COPY, lz4, heap only',
    composite(BATCH_SAMPLES),
    'lz4',
    false,
  ),
  blockVariant(
    'blocks of a batch, sample[], text COPY, lz4, partitions, key (bucket, first_id), index (name, bucket), both triggers',
    composite(BATCH_SAMPLES),
    'lz4',
    true,
  ),
  blockVariant(
    'blocks of a batch, sample[], text COPY, pglz, partitions, key, index, both triggers',
    composite(BATCH_SAMPLES),
    'pglz',
    true,
  ),
  blockVariant(
    'blocks of a request per (app, name, minute), sample[], text COPY, lz4, partitions, key, index, both triggers',
    composite(REQUEST_SAMPLES),
    'lz4',
    true,
  ),
  blockVariant(
    'blocks of a batch, an array per column, binary COPY, lz4, heap only',
    columns(BATCH_SAMPLES),
    'lz4',
    false,
  ),
  blockVariant(
    'blocks of a batch, an array per column, binary COPY, lz4, partitions, key, index, both triggers',
    columns(BATCH_SAMPLES),
    'lz4',
    true,
  ),
];
