import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { StorageVariant, TransactionWrites } from '../bench/storage-variants';
import { createTestDatabase, type TestDatabase } from './postgres';

function copyInto(client: pg.Client, table: string, format: string, payload: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = client.query(copyFrom(`COPY ${table} FROM STDIN${format}`));
    stream.on('error', reject);
    stream.on('finish', () => resolve());
    stream.end(payload);
  });
}

/** One transaction of a storage variant's `tx`; rolled back and rejected with the database's error when it fails. */
export async function writeTransaction(client: pg.Client, tx: TransactionWrites): Promise<void> {
  await client.query('BEGIN');
  try {
    for (const sql of tx.before ?? []) await client.query(sql);
    for (const step of tx.copies) await copyInto(client, step.table, step.format, step.payload);
    for (const sql of tx.statements) await client.query(sql);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  }
}

export interface VariantSchema {
  /** The describe's client, connected from `beforeAll` to `afterAll`. */
  client(): pg.Client;
  /** Makes schema `v` afresh with `variant`'s DDL and compression, and sets the client's search path to it. */
  inSchema(variant: StorageVariant): Promise<void>;
}

/** For a describe of storage variants: a database of its own (named after `name`) and one client on it. */
export function useVariantSchema(name: string): VariantSchema {
  let db: TestDatabase | undefined;
  let connected: pg.Client | undefined;
  const client = (): pg.Client => {
    if (connected === undefined) throw new Error('useVariantSchema: the client is used outside its describe');
    return connected;
  };
  beforeAll(async () => {
    db = await createTestDatabase(name);
    connected = new pg.Client({ connectionString: db.url });
    await connected.connect();
  });
  afterAll(async () => {
    await connected?.end();
    await db?.drop();
  });
  return {
    client,
    async inSchema(variant) {
      const c = client();
      await c.query('DROP SCHEMA IF EXISTS v CASCADE; CREATE SCHEMA v; SET search_path = v');
      await c.query(`SET default_toast_compression = ${variant.compression}`);
      await c.query(variant.ddl);
    },
  };
}
