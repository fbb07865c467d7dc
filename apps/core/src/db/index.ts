/** @hearth/core/db: what the other workspaces import of db/ (docs/architecture.md "How an area plugs in"). */
export * from './knex';
export * from './sql-functions';
export * from './transaction';
export * from './statement';
export * from './unreachable';
