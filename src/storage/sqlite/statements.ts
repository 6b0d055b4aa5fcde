import type Database from 'better-sqlite3';

/** Prepares each distinct SQL text once per connection; query shapes are few (one per filter combination). */
export function statementCache(db: Database.Database): (sql: string) => Database.Statement {
  const cache = new Map<string, Database.Statement>();
  return (sql) => {
    let stmt = cache.get(sql);
    if (stmt === undefined) {
      stmt = db.prepare(sql);
      cache.set(sql, stmt);
    }
    return stmt;
  };
}
