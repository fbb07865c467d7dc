export * from './common';
export * from './players';
export * from './sessions';
export * from './economy';
export * from './items';
export * from './errors';
export * from './dashboards';
