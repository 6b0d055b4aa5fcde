/**
 * Adds a value to a statement's parameters and returns its placeholder: each adapter has one
 * (PostgreSQL `$1`, `$2`, …; SQLite `@p1`, `@p2`, …), so SQL built once binds on either.
 */
export type Param = (value: unknown) => string;
