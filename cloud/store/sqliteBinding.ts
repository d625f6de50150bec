/**
 * better-sqlite3 is the one dependency svc cannot run without whose native binding comes from an
 * install script (a prebuilt download, else a compile). npm runs a dependency's install script only
 * when the user's project allows it (`allowScripts`), and never under `--ignore-scripts`: then the
 * package is there but its binding is not, and better-sqlite3's own error lists the paths it tried.
 * This says what happened and the two commands that fix it.
 */
export class SqliteBindingMissingError extends Error {}

export const SQLITE_BINDING_FIX =
  "better-sqlite3 has no native binding: its install script did not run (npm skips the install scripts a project has not approved, and all of them under --ignore-scripts). " +
  "In your project run:\n  npm install-scripts approve better-sqlite3\n  npm rebuild better-sqlite3\n" +
  '(README, "Install scripts"; or set SVC_DATABASE_URL to use PostgreSQL instead)';

const MISSING_BINDING = /Could not locate the bindings file|better_sqlite3\.node/;

/** Runs `open` (which loads the binding) and turns a missing binding into SqliteBindingMissingError. */
export function withSqliteBinding<T>(open: () => T): T {
  try {
    return open();
  } catch (err) {
    if (MISSING_BINDING.test((err as Error).message ?? "")) throw new SqliteBindingMissingError(SQLITE_BINDING_FIX, { cause: err });
    throw err;
  }
}
