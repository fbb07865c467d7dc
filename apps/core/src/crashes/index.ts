/** @hearth/core/crashes: what the other workspaces import of crashes/ (docs/architecture.md "How an area plugs in"). */
export * from './queue';
export * from './fingerprint';
export * from './records';
export * from './symbols';
export * from './uploads';
