import fc from 'fast-check';
import pg from 'pg';
import type { EventLimits } from '../../src/events/limits';
import { RequestScan } from '../../src/events/scan/scan-request';
import type { TelemetryEvent } from '../../src/events/types';
import { METRIC_SAMPLES } from '../../src/storage/layout/columns';
import { toMetricSampleRow } from '../../src/storage/layout/rows';
import { toCopyLine } from '../../src/storage/postgres/copy-encoding';
import { copyLineFromScan } from '../../src/storage/postgres/copy-line-from-scan';
import { metricBlocksCopy, samplesCopy } from '../../src/storage/postgres/metric-blocks-copy';
import { createTestDatabase, type TestDatabase } from '../support/postgres';
import { attrs, telemetryEvent } from '../support/telemetry-events';
import { from as copyFrom } from 'pg-copy-streams';

/*
 * The blocks writer copies the samples' binary COPY fields into blocks. The typed rows
 * (`toMetricSampleRow`, what the other writers store) inserted with PostgreSQL's own parameter
 * conversions are the reference: every sample unnested from the blocks, and every sample of the
 * staging payload, must equal its row there, byte for byte, whatever the text holds.
 */

const NOW = Date.UTC(2026, 11, 6, 12);
const LIMITS: EventLimits = {
  maxAttributes: 32,
  maxAttributeKeyLength: 64,
  maxStringLength: 1024,
  maxStackLength: 16384,
  maxNameLength: 128,
  maxSourceLength: 128,
  maxAgeMs: 7 * 86_400_000,
  maxFutureMs: 300_000,
};
let db: TestDatabase;
let client: pg.Client;

const COLUMNS = `id uuid, ts bigint, app text, name text, version text, env text, value float8, count bigint,
  min float8, max float8, sum float8, message text, attributes text`;

function copyIn(sql: string, payload: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(sql));
    stream.on('error', reject);
    stream.on('finish', () => resolve());
    stream.end(payload);
  });
}

beforeAll(async () => {
  db = await createTestDatabase('blocks_copy');
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(`CREATE TABLE reference (${COLUMNS}); CREATE TABLE staged (${COLUMNS});
    CREATE TABLE blocks (bucket bigint, app text, name text, id uuid[], ts bigint[], version text[], env text[],
      value float8[], count bigint[], min float8[], max float8[], sum float8[], message text[], attributes text[],
      origin text);
    CREATE VIEW unnested AS SELECT s.id, s.ts, b.app, b.name, s.version, s.env, s.value, s.count, s.min, s.max,
        s.sum, s.message, s.attributes
      FROM blocks b CROSS JOIN LATERAL
           unnest(b.id, b.ts, b.version, b.env, b.value, b.count, b.min, b.max, b.sum, b.message, b.attributes)
           AS s(id, ts, version, env, value, count, min, max, sum, message, attributes)`);
});

afterAll(async () => {
  await client?.end();
  await db?.drop();
});

/** Text of every kind COPY and PostgreSQL treat specially: escapes, `\N`, controls, U+0000, surrogates. */
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('', '\\N', '\\', '\t', '\n\r', 'a\\tb', '\u0000', '\uD800x', '🚀', 'naïve', '\\x41\\101'),
);

const sample: fc.Arbitrary<TelemetryEvent> = fc
  .record({
    app: fc.constantFrom('web', 'a\tb', 'x\\N'),
    name: fc.constantFrom('m.one', 'm\ntwo', 'ü'),
    second: fc.integer({ min: -150, max: 150 }),
    version: fc.option(text),
    env: fc.option(text),
    message: fc.option(text),
    attribute: text,
    number: fc.double({ noNaN: true, noDefaultInfinity: true }),
    summary: fc.option(
      fc.record({
        count: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constant(Number.MAX_SAFE_INTEGER)),
        min: fc.double({ noNaN: true, noDefaultInfinity: true }),
      }),
    ),
  })
  .map((r) =>
    telemetryEvent(
      'metric',
      {
        app: r.app,
        name: r.name,
        ts: NOW + r.second * 1000,
        version: r.version,
        env: r.env,
        message: r.message,
        attributes: attrs({ k: r.attribute, [r.attribute]: r.number }),
        value: r.summary === null ? r.number : null,
        summary:
          r.summary === null
            ? null
            : { count: r.summary.count, min: r.summary.min, max: r.summary.min, sum: r.summary.min, avg: 0 },
      },
      NOW,
    ),
  );

const SAMPLE = `id, ts, app, name, version, env, value, count, min, max, sum, message, attributes`;

const INSERT_REFERENCE = `INSERT INTO reference (${METRIC_SAMPLES.columns.map((c) => c.name).join(', ')})
  SELECT * FROM unnest(${METRIC_SAMPLES.columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ')})`;

/** Writes `samples` both ways and checks the blocks (and the staging payload) against the typed rows. */
async function expectSameRows(
  samples: readonly TelemetryEvent[],
  fields = samples.map((e) => toCopyLine(e).bytes),
): Promise<void> {
  await client.query('TRUNCATE reference, staged, blocks');
  const typed = samples.map(toMetricSampleRow);
  await client.query(
    INSERT_REFERENCE,
    METRIC_SAMPLES.columns.map((c) => typed.map((r) => r[c.name])),
  );
  const { blocks } = metricBlocksCopy(fields);
  await copyIn(`COPY blocks FROM STDIN (FORMAT binary)`, blocks);
  await copyIn(`COPY staged FROM STDIN (FORMAT binary)`, samplesCopy(fields));

  const rows = (sql: string) => client.query<{ r: string }>(sql).then((q) => q.rows.map((x) => x.r));
  const reference = await rows(
    `SELECT row_to_json(t)::text AS r FROM (SELECT ${SAMPLE} FROM reference ORDER BY ts, id) t`,
  );
  const unnested = await rows(
    `SELECT row_to_json(t)::text AS r FROM (SELECT ${SAMPLE} FROM unnested ORDER BY ts, id) t`,
  );
  expect(unnested).toEqual(reference);
  const staged = await rows(
    `SELECT row_to_json(t)::text AS r FROM (SELECT ${SAMPLE} FROM staged ORDER BY ts, id) t`,
  );
  expect(staged).toEqual(reference);
  // Exact bytes of every text value, not only what JSON shows of them.
  const digest = `md5(string_agg(concat_ws('|', id, ts, app, name, version, env, message, attributes,
      value::text, count::text, min::text, max::text, sum::text), '#' ORDER BY ts, id))`;
  const [ref] = await rows(`SELECT ${digest} AS r FROM reference`);
  const [got] = await rows(`SELECT ${digest} AS r FROM unnested`);
  expect(got).toBe(ref);

  expect(await rows(`SELECT DISTINCT origin AS r FROM blocks`)).toEqual(fields.length > 0 ? [''] : []);
  const groups = await rows(
    `SELECT concat(bucket, ' ', count(*), ' ', bool_and(ts[1] - ts[1] % 60000 = bucket)) AS r
         FROM blocks GROUP BY bucket, app, name ORDER BY 1`,
  );
  expect(groups.every((g) => g.endsWith(' 1 t'))).toBe(true);
  const minutes = await rows(
    `SELECT DISTINCT concat(ts - ts % 60000, app, '|', name) AS r FROM reference ORDER BY 1`,
  );
  expect(groups).toHaveLength(minutes.length);
}

describe("metric blocks from the samples' binary fields", () => {
  it('unnest to exactly the typed rows, in blocks and staged, one block per (app, name, minute), a key per sample', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(sample, { minLength: 1, maxLength: 40 }), (samples) =>
        expectSameRows(samples),
      ),
      { numRuns: 60 },
    );
  });

  it('read every JSON number of a request as PostgreSQL does, whatever its spelling (the single pass parses the request’s)', async () => {
    const digits = (min: number, max: number) =>
      fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((d) => d.join(''));
    const jsonNumber = fc
      .tuple(
        fc.constantFrom('', '-'),
        fc.oneof(
          fc.constant('0'),
          fc.tuple(fc.constantFrom(...'123456789'), digits(0, 20)).map(([a, b]) => a + b),
        ),
        fc.option(digits(1, 25).map((d) => `.${d}`)),
        fc.option(
          fc
            .tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(1, 3))
            .map((p) => p.join('')),
        ),
      )
      .map(([sign, whole, fraction, exponent]) => `${sign}${whole}${fraction ?? ''}${exponent ?? ''}`)
      // PostgreSQL refuses what overflows, or underflows to zero (JavaScript reads it as 0).
      .filter(
        (n) => Number.isFinite(Number(n)) && (Number(n) !== 0 || !/[1-9]/.test(n.split(/e/i)[0] ?? '')),
      );
    await fc.assert(
      fc.asyncProperty(fc.array(jsonNumber, { minLength: 1, maxLength: 30 }), async (numbers) => {
        const events = numbers.map(
          (n, i) =>
            `{"id":"0190f3c2-0000-7000-8000-${String(i).padStart(12, '0')}","type":"metric","name":"m","ts":${NOW + i},` +
            `"source":{"app":"web"},"value":${n}}`,
        );
        const body = Buffer.from(`{"events":[${events.join(',')}]}`);
        const fields: Buffer[] = [];
        const scan = RequestScan.open(body, LIMITS, NOW, 100, () => undefined);
        expect(scan).not.toBeNull();
        scan?.step(Number.MAX_SAFE_INTEGER, {
          fast: (f) => fields.push(Buffer.from(copyLineFromScan(body, f).bytes)),
          slow: () => undefined,
        });
        await client.query('TRUNCATE blocks');
        const { blocks } = metricBlocksCopy(fields);
        await copyIn(`COPY blocks FROM STDIN (FORMAT binary)`, blocks);
        const stored = await client.query<{ ts: string; same: boolean }>(
          `SELECT u.ts, u.value = (n.text)::float8 AS same FROM unnested u
             JOIN unnest($1::text[], $2::bigint[]) AS n(text, ts) ON n.ts = u.ts`,
          [numbers, numbers.map((_, i) => NOW + i)],
        );
        expect(stored.rows.length).toBe(fields.length);
        expect(stored.rows.filter((r) => !r.same)).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it('refuses bytes that are not a metric sample of ours instead of writing something else', () => {
    const sample = toCopyLine(telemetryEvent('metric', {}, NOW)).bytes;
    expect(() => metricBlocksCopy([sample.subarray(0, sample.length - 1)])).toThrow(/fields|bytes/);
    expect(() => metricBlocksCopy([Buffer.concat([sample, Buffer.from([0])])])).toThrow(
      /fewer fields|more bytes/,
    );
    const shortId = Buffer.from(sample);
    shortId.writeInt32BE(15, 0);
    expect(() => metricBlocksCopy([shortId])).toThrow(/id or ts|fields|bytes/);
  });
});
