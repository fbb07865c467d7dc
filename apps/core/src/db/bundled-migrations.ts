import type { Knex } from 'knex';

/**
 * The migrations compiled into the `hearth` bundle, by file name (`20261121000000_….ts`: the names
 * knex records in knex_migrations when it reads migrations/ from the sources, so a database migrated
 * either way is up to date for the other). The build (apps/cli/build.ts) replaces this module with
 * one whose function requires every file of migrations/ when called: a command that does not migrate
 * (`hearth get`) never loads them, nor what they import (pg-boss). Run from the sources it is
 * undefined and knex reads migrations/ itself. Nothing else belongs here: the build does not see
 * this file's other exports.
 */
export const bundledMigrations: (() => ReadonlyMap<string, Knex.Migration>) | undefined = undefined;
