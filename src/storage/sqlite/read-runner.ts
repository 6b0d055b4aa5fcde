import type Database from 'better-sqlite3';
import type { ReadRunner } from '../layout/read-runner';
import { namedParams } from './named-params';

/** Runs shared read SQL on the connection (synchronously), with named parameters. */
export function sqliteReadRunner(prepare: (sql: string) => Database.Statement): ReadRunner {
  return {
    async rows<Row>(build: (param: (v: unknown) => string) => string): Promise<Row[]> {
      const { params, param } = namedParams();
      const sql = build(param);
      return prepare(sql).all(params) as Row[];
    },
  };
}
