/** @hearth/core/support: what the other workspaces import of support/ (docs/architecture.md "How an area plugs in"). */
export * from './service';
