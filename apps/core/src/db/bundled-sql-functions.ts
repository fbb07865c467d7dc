/**
 * The database functions' source files compiled into the `hearth` bundle: each file's path under
 * apps/core/src and its text. The build (apps/cli/build.ts) replaces this module with one that holds
 * every `sql/*.sql` file of apps/core/src; run from the sources it is undefined and sql-functions.ts
 * reads the files. Nothing else belongs here: the build does not see this file's other exports.
 */
export const bundledSqlFunctions: ReadonlyArray<{ file: string; sql: string }> | undefined = undefined;
