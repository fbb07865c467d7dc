/** @hearth/core/auth: what the other workspaces import of auth/ (docs/architecture.md "How an area plugs in"). */
export * from './token-claims';
export * from './tokens';
export * from './server-keys';
export * from './signing-keys';
export * from './authenticate';
export * from './refresh';
export { KEY_SET_FETCH } from './idp';
