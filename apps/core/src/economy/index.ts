/** @hearth/core/economy: what the other workspaces import of economy/ (docs/architecture.md "How an area plugs in"). */
export * from './definitions';
export * from './service';
export * from './engine';
export * from './move-kinds';
export * from './refusals';
export * from './senders';
