export * from './server';
export * from './http/route';
export * from './http/app';
export * from './http/openapi';
export * from './http/metrics';
export { routeTable } from './routes';
export * from './http/checks';
export { MAX_JSON_DEPTH } from './http/body';
export * from './http/tags';
