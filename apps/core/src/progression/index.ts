/** @hearth/core/progression: what the other workspaces import of progression/ (docs/architecture.md "How an area plugs in"). */
export * from './unlocks';
export * from './skill-trees';
export * from './xp';
