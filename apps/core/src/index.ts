/**
 * @hearth/core, the root entry: what belongs to no folder of core and every area uses (the top-level
 * files). It loads no area: HearthCore, which wires them all, is @hearth/core/hearth, and each folder
 * has its own entry, @hearth/core/<folder> (docs/architecture.md "How an area plugs in").
 */
export * from './errors';
export * from './config';
export * from './logger';
export * from './ids';
export * from './cache';
export * from './clock';
export * from './validation';
export * from './pagination';
export * from './idempotency';
export * from './invalidation';
export * from './sealing';
export * from './canonical-json';
