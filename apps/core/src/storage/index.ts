/** @hearth/core/storage: what the other workspaces import of storage/ (docs/architecture.md "How an area plugs in"). */
export * from './object-store';
export * from './disk-store';
export * from './s3-store';
export * from './open';
export * from './upload-tokens';
