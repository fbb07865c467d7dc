export * from './protocol';
export * from './socket';
export * from './session-reader';
export * from './server';
export * from './standalone';
export * from './metrics';
