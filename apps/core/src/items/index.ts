/** @hearth/core/items: what the other workspaces import of items/ (docs/architecture.md "How an area plugs in"). */
export * from './item-types';
export * from './service';
export * from './purchases';
