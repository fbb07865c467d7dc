/** @hearth/core/sessions: what the other workspaces import of sessions/ (docs/architecture.md "How an area plugs in"). */
export * from './events';
export * from './socket';
export * from './service';
