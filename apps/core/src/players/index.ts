/** @hearth/core/players: what the other workspaces import of players/ (docs/architecture.md "How an area plugs in"). */
export * from './service';
export type { PlayerHoldings } from './deletion';
export * from './word-filter';
export * from './hold';
