/** @hearth/core/net: what the other workspaces import of net/ (docs/architecture.md "How an area plugs in"). */
export * from './client-address';
export * from './paths';
