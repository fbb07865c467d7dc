/** @hearth/core/contract: what the other workspaces import of contract/ (docs/architecture.md "How an area plugs in"). */
export * from './blog-content';
export * from './item-type';
export * from './card-type';
export * from './skill-tree';
export * from './game-keys';
export * from './idempotency-key';
export * from './ledger-reasons';
export * from './resources';
export * from './rules';
export * from './dashboards';
export * from './origins';
export * from './store';
export * from './product';
