export * from './protocol';
export * from './server';
export * from './standalone';
export * from './metrics';
