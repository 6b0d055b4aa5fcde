import type { TelemetryEvent } from '../../src/events/types';
import { encodeAttributes } from '../../src/storage/layout/rows';
import { toCopyLine } from '../../src/storage/postgres/copy-encoding';

/**
 * Ways of storing metric samples in PostgreSQL, each a table `t` (with its partitions, indexes and
 * triggers) created by `ddl` in an empty schema, and the COPY text of one transaction's samples.
 * Row variants take one row a sample (today's `metric_samples` columns and COPY lines); block
 * variants one row per (app, name, minute) of a group of samples, the samples as an array of a
 * composite type.
 */
export interface StorageVariant {
  readonly name: string;
  readonly ddl: string;
  /** How large values are compressed (`default_toast_compression` of the writing session). */
  readonly compression: 'lz4' | 'pglz';
  /** Names what `copyText` writes: variants with the same layout write the same text. */
  readonly layout: string;
  /** COPY text (`COPY t FROM STDIN`) of one transaction's samples. */
  copyText(samples: readonly TelemetryEvent[]): Buffer;
}

/** Today's `metric_samples` columns (migration 001). */
const ROW_COLUMNS = `id uuid NOT NULL, ts bigint NOT NULL, app text NOT NULL, name text NOT NULL, version text,
  env text, value double precision, count bigint, min double precision, max double precision,
  sum double precision, message text, attributes text NOT NULL`;

/** Daily partitions of `t`: a default one, and the days around now (as `ensurePartitions` makes them). */
function dailyPartitions(): string {
  const day = 86_400_000;
  const today = Math.floor(Date.now() / day) * day;
  return `CREATE TABLE t_default PARTITION OF t DEFAULT;
CREATE TABLE t_yesterday PARTITION OF t FOR VALUES FROM (${today - day}) TO (${today});
CREATE TABLE t_today PARTITION OF t FOR VALUES FROM (${today}) TO (${today + day});
CREATE TABLE t_tomorrow PARTITION OF t FOR VALUES FROM (${today + day}) TO (${today + 2 * day});`;
}

/** The two statement-level triggers of today's schema (migrations 003 and 005), over `t`'s rows. */
function triggers(which: 'invalidation' | 'both', bucket: string, samples: string): string {
  const invalidation = `CREATE TABLE invalidations (name text NOT NULL, app text NOT NULL, bucket bigint NOT NULL);
CREATE FUNCTION log_invalidations() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN INSERT INTO invalidations SELECT DISTINCT name, app, ${bucket} FROM inserted; RETURN NULL; END $fn$;
CREATE TRIGGER t_invalidations AFTER INSERT ON t REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION log_invalidations();`;
  if (which === 'invalidation') return invalidation;
  return `${invalidation}
CREATE TABLE outcomes (app text NOT NULL, minute bigint NOT NULL, type text NOT NULL, outcome text NOT NULL,
  reason text NOT NULL, origin text NOT NULL, count bigint NOT NULL);
CREATE INDEX ON outcomes (app, minute);
CREATE INDEX ON outcomes (minute);
CREATE FUNCTION count_stored() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN INSERT INTO outcomes SELECT app, ${bucket}, 'metric', 'stored', '', '', ${samples} FROM inserted GROUP BY 1, 2;
  RETURN NULL; END $fn$;
CREATE TRIGGER t_outcomes AFTER INSERT ON t REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION count_stored();`;
}

const rowLines = (samples: readonly TelemetryEvent[]): Buffer =>
  Buffer.concat(samples.map((e) => toCopyLine(e).bytes));

function rowVariant(name: string, ddl: string): StorageVariant {
  return { name, ddl, compression: 'pglz', layout: 'rows', copyText: rowLines };
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
    'rows: + outcome-count trigger (today)',
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

/** One field of a composite literal: empty for NULL, quoted (quotes and backslashes doubled) when needed. */
function compositeField(s: string | number | null): string {
  if (s === null) return '';
  const text = String(s);
  if (text !== '' && !/[(),"\\\s]/.test(text)) return text;
  return `"${text.replace(/["\\]/g, (c) => c + c)}"`;
}

/** A sample as an element of a `sample[]` literal. */
function sampleElement(e: TelemetryEvent): string {
  const s = e.summary;
  const composite = `(${[
    e.id,
    e.ts,
    e.version,
    e.env,
    e.value,
    s?.count ?? null,
    s?.min ?? null,
    s?.max ?? null,
    s?.sum ?? null,
    e.message,
    encodeAttributes(e.attributes),
  ]
    .map(compositeField)
    .join(',')})`;
  return `"${composite.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

/** COPY text's escapes (backslash, newline, carriage return, tab). */
function copyEscape(s: string): string {
  return s.replace(
    /[\\\n\r\t]/g,
    (c) => ({ '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' })[c] as string,
  );
}

/**
 * Block lines: the samples in groups of `groupSize` (in arrival order), each group's samples per
 * (app, name, minute) one row: the minute, the first sample's id, app, name, the first and last
 * `ts`, and the samples.
 */
function blockLines(samples: readonly TelemetryEvent[], groupSize: number): Buffer {
  let out = '';
  for (let g = 0; g < samples.length; g += groupSize) {
    const blocks = new Map<string, TelemetryEvent[]>();
    for (const e of samples.slice(g, g + groupSize)) {
      const key = `${e.app}\u0000${e.name}\u0000${e.ts - (e.ts % 60_000)}`;
      const list = blocks.get(key);
      if (list) list.push(e);
      else blocks.set(key, [e]);
    }
    for (const list of blocks.values()) {
      const first = list[0] as TelemetryEvent;
      let min = first.ts;
      let max = first.ts;
      for (const e of list) {
        if (e.ts < min) min = e.ts;
        if (e.ts > max) max = e.ts;
      }
      const array = `{${list.map(sampleElement).join(',')}}`;
      out +=
        `${first.ts - (first.ts % 60_000)}\t${first.id}\t${copyEscape(first.app)}\t${copyEscape(first.name)}\t` +
        `${min}\t${max}\t${copyEscape(array)}\n`;
    }
  }
  return Buffer.from(out);
}

const BLOCK_COLUMNS = `bucket bigint NOT NULL, first_id uuid NOT NULL, app text NOT NULL, name text NOT NULL,
  ts_min bigint NOT NULL, ts_max bigint NOT NULL, samples sample[] NOT NULL`;
const BLOCK_TRIGGERS = triggers('both', 'bucket', 'sum(cardinality(samples))');

/** Samples of one request (100 events, 70 % metric samples) and of one collector batch (2,000 events). */
export const REQUEST_SAMPLES = 70;
export const BATCH_SAMPLES = 1_400;

function blockVariant(
  name: string,
  groupSize: number,
  compression: 'lz4' | 'pglz',
  full: boolean,
): StorageVariant {
  const table = full
    ? `CREATE TABLE t (${BLOCK_COLUMNS}, PRIMARY KEY (bucket, first_id)) PARTITION BY RANGE (bucket);
${dailyPartitions()}
CREATE INDEX ON t (name, bucket); ${BLOCK_TRIGGERS}`
    : `CREATE TABLE t (${BLOCK_COLUMNS});`;
  return {
    name,
    ddl: `${SAMPLE_TYPE} ${table}`,
    compression,
    layout: `blocks of ${groupSize}`,
    copyText: (samples) => blockLines(samples, groupSize),
  };
}

/** Blocks of a batch's samples per (app, name, minute), and of a request's. */
export const BLOCK_VARIANTS: readonly StorageVariant[] = [
  blockVariant('blocks of a batch per (app, name, minute), lz4, heap only', BATCH_SAMPLES, 'lz4', false),
  blockVariant(
    'blocks of a batch, lz4, partitions, key (bucket, first_id), index (name, bucket), both triggers',
    BATCH_SAMPLES,
    'lz4',
    true,
  ),
  blockVariant('blocks of a batch, pglz, partitions, key, index, both triggers', BATCH_SAMPLES, 'pglz', true),
  blockVariant(
    'blocks of a request per (app, name, minute), lz4, partitions, key, index, both triggers',
    REQUEST_SAMPLES,
    'lz4',
    true,
  ),
];
