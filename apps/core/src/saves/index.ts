/** @hearth/core/saves: what the other workspaces import of saves/ (docs/architecture.md "How an area plugs in"). */
export * from './service';
