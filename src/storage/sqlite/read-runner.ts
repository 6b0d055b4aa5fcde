import type Database from 'better-sqlite3';
import type { ReadRunner } from '../layout/read-runner';
import { namedParams } from './named-params';
import { untimed, type TimeCall } from './call-timer';

/** Runs shared read SQL on the connection (synchronously), with named parameters. */
export function sqliteReadRunner(
  prepare: (sql: string) => Database.Statement,
  time: TimeCall = untimed,
): ReadRunner {
  return {
    async rows<Row>(build: (param: (v: unknown) => string) => string): Promise<Row[]> {
      const { params, param } = namedParams();
      const sql = build(param);
      return time('read', () => prepare(sql).all(params) as Row[]);
    },
  };
}
