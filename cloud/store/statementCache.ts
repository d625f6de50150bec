/**
 * better-sqlite3 with its prepared statements kept: Kysely's SQLite driver prepares every query
 * afresh, and compiling the SQL was the largest single cost of a small request's queries (each
 * `/v1/jobs` revalidation runs four: principal, project, scope, list version). Kysely emits the
 * same SQL text for the same query shape, so a few hundred statements cover every route; the
 * bound keeps queries whose text varies (IN lists of varying length) from growing it forever.
 *
 * Reusing a statement is safe here: the driver runs one query at a time on its one connection,
 * and SQLite re-prepares a kept statement by itself when a migration changes the schema.
 */
import type { Database as SqliteDatabase, Statement } from "better-sqlite3";

const MAX_STATEMENTS = 500;

/** What Kysely's SqliteDialect needs of a database: `prepare` and `close`. */
export function withStatementCache(database: SqliteDatabase): Pick<SqliteDatabase, "prepare" | "close"> {
  const kept = new Map<string, Statement>();
  return {
    prepare(sql: string) {
      let statement = kept.get(sql);
      if (statement) {
        kept.delete(sql); // re-inserted below: Map order is the recency order
      } else {
        statement = database.prepare(sql);
        if (kept.size >= MAX_STATEMENTS) kept.delete(kept.keys().next().value!);
      }
      kept.set(sql, statement);
      return statement;
    },
    close() {
      kept.clear();
      return database.close();
    },
  } as Pick<SqliteDatabase, "prepare" | "close">;
}
