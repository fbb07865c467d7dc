/** @hearth/core/content: what the other workspaces import of content/ (docs/architecture.md "How an area plugs in"). */
export * from './game-config';
export * from './game-config-sync';
export * from './content-watch';
export * from './definition-snapshots';
