/** @hearth/core/coord: what the other workspaces import of coord/ (docs/architecture.md "How an area plugs in"). */
export * from './coordination';
export * from './limits';
export { MemoryCoordination } from './memory';
export { RedisCoordination } from './redis';
