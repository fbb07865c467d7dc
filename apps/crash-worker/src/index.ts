export * from './archive';
export * from './config';
export * from './metrics';
export * from './worker';
export * from './store-report';
