/** @hearth/core/blog: what the other workspaces import of blog/ (docs/architecture.md "How an area plugs in"). */
export * from './sync';
export * from './service';
