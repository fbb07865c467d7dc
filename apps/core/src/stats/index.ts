/** @hearth/core/stats: what the other workspaces import of stats/ (docs/architecture.md "How an area plugs in"). */
export * from './service';
