/** @hearth/core/legal: what the other workspaces import of legal/ (docs/architecture.md "How an area plugs in"). */
export * from './legal';
