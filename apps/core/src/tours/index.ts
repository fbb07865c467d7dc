/** @hearth/core/tours: what the other workspaces import of tours/ (docs/architecture.md "How an area plugs in"). */
export * from './tours';
