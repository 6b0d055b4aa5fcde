import type { TelemetryEvent } from '../../src/events/types';
import { encodeAttributes } from '../../src/storage/layout/rows';
import { toCopyLine } from '../../src/storage/postgres/copy-encoding';
import * as bin from './binary-copy';
import { binaryCopy } from './binary-copy';

/**
 * Ways of storing metric samples in PostgreSQL, each a table `t` (with its partitions, indexes and
 * triggers) created by `ddl` in an empty schema, and the COPY text of one transaction's samples.
 * Row variants take one row a sample (today's `metric_samples` columns and COPY lines); block
 * variants one row per (app, name, minute) of a group of samples, the samples as an array of a
 * composite type (text COPY) or as one array per column (binary COPY).
 */
export interface StorageVariant {
  readonly name: string;
  readonly ddl: string;
  /** How large values are compressed (`default_toast_compression` of the writing session). */
  readonly compression: 'lz4' | 'pglz';
  /** `COPY t FROM STDIN` options: text (empty) or binary. */
  readonly copyFormat: '' | ' (FORMAT binary)';
  /** Names what `copyText` writes: variants with the same layout write the same text. */
  readonly layout: string;
  /** What `COPY t FROM STDIN` reads for one transaction's samples. */
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
  return { name, ddl, compression: 'pglz', copyFormat: '', layout: 'rows', copyText: rowLines };
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

/** One block: the samples of a group with the same (app, name, minute). */
interface Block {
  readonly bucket: number;
  readonly first: TelemetryEvent;
  readonly tsMin: number;
  readonly tsMax: number;
  readonly samples: readonly TelemetryEvent[];
}

/** The samples in groups of `groupSize` (in arrival order), each group's per (app, name, minute). */
function blocksOf(samples: readonly TelemetryEvent[], groupSize: number): Block[] {
  const out: Block[] = [];
  for (let g = 0; g < samples.length; g += groupSize) {
    const groups = new Map<string, TelemetryEvent[]>();
    for (const e of samples.slice(g, g + groupSize)) {
      const key = `${e.app}\u0000${e.name}\u0000${e.ts - (e.ts % 60_000)}`;
      const list = groups.get(key);
      if (list) list.push(e);
      else groups.set(key, [e]);
    }
    for (const list of groups.values()) {
      const first = list[0] as TelemetryEvent;
      let tsMin = first.ts;
      let tsMax = first.ts;
      for (const e of list) {
        if (e.ts < tsMin) tsMin = e.ts;
        if (e.ts > tsMax) tsMax = e.ts;
      }
      out.push({ bucket: first.ts - (first.ts % 60_000), first, tsMin, tsMax, samples: list });
    }
  }
  return out;
}

/**
 * Text COPY of blocks as one array of a composite type: the minute, the first sample's id, app,
 * name, the first and last `ts`, and the samples.
 */
function compositeBlockLines(samples: readonly TelemetryEvent[], groupSize: number): Buffer {
  let out = '';
  for (const b of blocksOf(samples, groupSize)) {
    const array = `{${b.samples.map(sampleElement).join(',')}}`;
    out +=
      `${b.bucket}\t${b.first.id}\t${copyEscape(b.first.app)}\t${copyEscape(b.first.name)}\t` +
      `${b.tsMin}\t${b.tsMax}\t${copyEscape(array)}\n`;
  }
  return Buffer.from(out);
}

/** Binary COPY of blocks with one array per column of the samples (`COLUMN_BLOCK_COLUMNS`). */
function columnBlockCopy(samples: readonly TelemetryEvent[], groupSize: number): Buffer {
  const nullable = <T>(v: T | null | undefined, f: (x: T) => Buffer): Buffer | null =>
    v === null || v === undefined ? null : f(v);
  return binaryCopy(
    blocksOf(samples, groupSize).map((b) => {
      const ss = b.samples;
      return [
        bin.int8(b.bucket),
        bin.uuid(b.first.id),
        bin.text(b.first.app),
        bin.text(b.first.name),
        bin.int8(b.tsMin),
        bin.int8(b.tsMax),
        bin.array(
          bin.OID.uuid,
          ss.map((e) => bin.uuid(e.id)),
        ),
        bin.array(
          bin.OID.int8,
          ss.map((e) => bin.int8(e.ts)),
        ),
        bin.array(
          bin.OID.text,
          ss.map((e) => nullable(e.version, bin.text)),
        ),
        bin.array(
          bin.OID.text,
          ss.map((e) => nullable(e.env, bin.text)),
        ),
        bin.array(
          bin.OID.float8,
          ss.map((e) => nullable(e.value, bin.float8)),
        ),
        bin.array(
          bin.OID.int8,
          ss.map((e) => nullable(e.summary?.count, bin.int8)),
        ),
        bin.array(
          bin.OID.float8,
          ss.map((e) => nullable(e.summary?.min, bin.float8)),
        ),
        bin.array(
          bin.OID.float8,
          ss.map((e) => nullable(e.summary?.max, bin.float8)),
        ),
        bin.array(
          bin.OID.float8,
          ss.map((e) => nullable(e.summary?.sum, bin.float8)),
        ),
        bin.array(
          bin.OID.text,
          ss.map((e) => nullable(e.message, bin.text)),
        ),
        bin.array(
          bin.OID.text,
          ss.map((e) => bin.text(encodeAttributes(e.attributes))),
        ),
      ];
    }),
  );
}

const BLOCK_KEYS = `bucket bigint NOT NULL, first_id uuid NOT NULL, app text NOT NULL, name text NOT NULL,
  ts_min bigint NOT NULL, ts_max bigint NOT NULL`;
/** Blocks as one array of the composite type `sample`. */
const COMPOSITE_BLOCK_COLUMNS = `${BLOCK_KEYS}, samples sample[] NOT NULL`;
/** Blocks as one array per column of the samples, in `columnBlockCopy`'s order. */
const COLUMN_BLOCK_COLUMNS = `${BLOCK_KEYS}, ids uuid[] NOT NULL, ts bigint[] NOT NULL, version text[],
  env text[], value double precision[], count bigint[], min double precision[], max double precision[],
  sum double precision[], message text[], attributes text[] NOT NULL`;

/** Samples of one request (100 events, 70 % metric samples) and of one collector batch (2,000 events). */
export const REQUEST_SAMPLES = 70;
export const BATCH_SAMPLES = 1_400;

interface BlockForm {
  readonly columns: string;
  /** Samples in a block row, for the outcome-count trigger. */
  readonly cardinality: string;
  readonly types: string;
  readonly layout: string;
  readonly copyFormat: '' | ' (FORMAT binary)';
  readonly copyText: (samples: readonly TelemetryEvent[]) => Buffer;
}

const composite = (groupSize: number): BlockForm => ({
  columns: COMPOSITE_BLOCK_COLUMNS,
  cardinality: 'sum(cardinality(samples))',
  types: SAMPLE_TYPE,
  layout: `composite blocks of ${groupSize}`,
  copyFormat: '',
  copyText: (samples) => compositeBlockLines(samples, groupSize),
});

const columns = (groupSize: number): BlockForm => ({
  columns: COLUMN_BLOCK_COLUMNS,
  cardinality: 'sum(cardinality(ids))',
  types: '',
  layout: `column blocks of ${groupSize}`,
  copyFormat: ' (FORMAT binary)',
  copyText: (samples) => columnBlockCopy(samples, groupSize),
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
    copyFormat: form.copyFormat,
    copyText: form.copyText,
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
